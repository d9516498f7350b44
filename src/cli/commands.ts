// The subcommands of the stategate command. Each returns its exit code: 0 the gate passed,
// 2 the gate failed (--fail-on), 1 stategate could not run.
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { loadSuite, sortProblems } from '../config/load.js';
import {
  type Choice,
  type ChoiceOption,
  type CountOption,
  type FailOn,
  OptionError,
  parseChoice,
  parseCount,
  parseShard,
} from '../config/options.js';
import { unsetPassEnvProblems } from '../config/pass-env.js';
import { ConfigError, formatProblem, type Problem, type SuiteParts } from '../config/suite.js';
import { exitCodeFor } from '../gate/index.js';
import type { Report } from '../model/report.js';
import { renderJunit } from '../report/junit.js';
import { renderTerminal } from '../report/terminal.js';
import type { CompareOptions, CompareResult } from '../run/api.js';
import { interruptExitCode } from '../run/interrupt.js';
import { mergeShards } from '../run/merge-shards.js';
import { databaseFor, runCompare } from '../run/pipeline.js';
import { prepareSuiteSql } from '../run/prepare-suite.js';
import { readReportFile } from '../run/read-report.js';
import { writeReports } from '../run/run-report.js';
import { chooseEngine } from '../sandbox/index.js';
import { runDemo, runFlakyDemo } from './demo.js';
import type { CliValues } from './main.js';
import { createProgress } from './progress.js';

export function fail(message: string): number {
  process.stderr.write(`stategate: ${message}\n`);
  return 1;
}

/** An option's value through the parser the action shares, with the error named as the user wrote it. */
function option<T>(name: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    throw e instanceof OptionError ? new Error(`--${name}: ${e.message}`) : e;
  }
}

/** A word option (--engine, --fail-on, ...), undefined when not given. */
function choice<N extends ChoiceOption>(values: CliValues, name: N): Choice<N> | undefined {
  const v = values[name];
  return v === undefined ? undefined : option(name, () => parseChoice(name, v));
}

/** A count option (--repeats, --concurrency), undefined when not given. */
function count(values: CliValues, name: CountOption): number | undefined {
  const v = values[name];
  return v === undefined ? undefined : option(name, () => parseCount(name, v));
}

function failOn(values: CliValues): FailOn {
  return choice(values, 'fail-on') ?? 'block';
}

function engineOption(values: CliValues): CompareOptions['engine'] {
  return choice(values, 'engine');
}

/** Options shared by compare and run. */
export function runOptions(values: CliValues): Omit<CompareOptions, 'base' | 'head'> {
  const suiteFrom = choice(values, 'suite-from');
  const policyFrom = choice(values, 'policy-from');
  const isolation = choice(values, 'isolation');
  return {
    repo: values.repo,
    config: values.config,
    repeats: count(values, 'repeats'),
    concurrency: count(values, 'concurrency'),
    shard: values.shard ? option('shard', () => parseShard(values.shard as string)) : null,
    filter:
      values.scenario || values.tag ? { scenarios: values.scenario ?? [], tags: values.tag ?? [] } : null,
    databaseUrl: values['database-url'],
    // The command's user waits for the verdict, not for the run's databases to be dropped.
    teardown: 'detach',
    out: values.out,
    engine: engineOption(values),
    suiteFrom,
    policyFrom,
    isolation,
    sudo: choice(values, 'sudo'),
    onProgress: createProgress(),
  };
}

export function printProblems(problems: Problem[]): void {
  for (const p of problems) process.stderr.write(`${formatProblem(p)}\n`);
  process.stderr.write(`${problems.length} problem${problems.length === 1 ? '' : 's'} found.\n`);
}

async function runAndReport(values: CliValues, options: CompareOptions): Promise<number> {
  let result: CompareResult;
  let level: FailOn;
  try {
    level = failOn(values);
    result = await runCompare(options);
  } catch (err) {
    if (err instanceof ConfigError) {
      printProblems(err.problems);
      return 1;
    }
    return fail(err instanceof Error ? err.message : String(err));
  }
  finish(result.report, values, result.reportPath);
  // An interrupted run wrote its partial report; its exit status says it was interrupted.
  if (result.report.interrupted) return interruptExitCode() ?? 1;
  return exitCodeFor(result.report.verdict, level);
}

function finish(report: Report, values: CliValues, reportPath: string): void {
  const color = !values['no-color'] && Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
  process.stdout.write(renderTerminal(report, { color }));
  process.stdout.write(
    `\nFull report: ${reportPath} (and report.md, report.html, episodes.jsonl beside it)\n`,
  );
  if (values.junit) writeFileSync(resolve(values.junit), renderJunit(report));
}

export async function commandCompare(values: CliValues): Promise<number> {
  if (!values.base || !values.head) return fail('compare needs --base REF|DIR and --head REF|DIR');
  try {
    return await runAndReport(values, {
      ...runOptions(values),
      base: values.base,
      head: values.head,
      cache: values.cache,
    });
  } catch (err) {
    return fail((err as Error).message);
  }
}

export async function commandRun(values: CliValues): Promise<number> {
  if (values.cache !== undefined)
    return fail('--cache applies to compare: it keeps the base, and run has none');
  try {
    return await runAndReport(values, { ...runOptions(values), base: null, head: values.dir ?? '.' });
  } catch (err) {
    return fail((err as Error).message);
  }
}

export async function commandValidate(values: CliValues): Promise<number> {
  const configPath = resolve(values.dir ?? '.', values.config ?? 'stategate.yml');
  if (!existsSync(configPath)) {
    return fail(
      `validate: no ${values.config ?? 'stategate.yml'} in ${dirname(configPath)} (pass --dir DIR or --config FILE, or create one: see docs/formats/stategate.md)`,
    );
  }
  const loaded = await loadSuite(configPath);
  // With file problems, the SQL of the files that did load is still prepared: one pass shows all.
  const parts = loaded.ok ? loaded.suite : loaded.parts;
  const problems: Problem[] = loaded.ok ? [] : [...loaded.problems];
  if (parts) problems.push(...(await suiteSqlProblems(parts, values)));
  // A pass_env variable this environment does not set: every episode's agent would start without it.
  if (loaded.ok) problems.push(...(await unsetPassEnvProblems(loaded.suite, process.env)));
  if (problems.length > 0 || !loaded.ok) {
    printProblems(sortProblems(problems));
    if (!loaded.ok && !parts)
      process.stderr.write(
        'SQL was not prepared: the database section or the schema and fixture files have problems of their own.\n',
      );
    return 1;
  }
  const { suite } = loaded;
  process.stdout.write(
    `${suite.configFile}: ok (${suite.scenarios.length} scenarios, ${suite.tools.size} tools, every SQL statement prepared against the template)\n`,
  );
  return 0;
}

/** Builds the template and prepares every statement of `parts` against it; a failed build is one problem. */
async function suiteSqlProblems(parts: SuiteParts, values: CliValues): Promise<Problem[]> {
  let engine: Awaited<ReturnType<typeof chooseEngine>> | undefined;
  try {
    const requested = engineOption(values);
    engine = await chooseEngine(
      databaseFor(parts, { engine: requested, databaseUrl: values['database-url'] }),
      {
        engine: requested,
      },
    );
    const template = await engine.buildTemplate(parts.template);
    return await prepareSuiteSql(parts, template);
  } catch (err) {
    return [
      {
        file: parts.configFile,
        line: 1,
        col: 1,
        message: `could not build the template: ${(err as Error).message}`,
      },
    ];
  } finally {
    await engine?.close();
  }
}

export async function commandMerge(values: CliValues, files: string[]): Promise<number> {
  if (files.length === 0) return fail('merge needs one or more report.json files');
  try {
    const level = failOn(values);
    // Each report is input to check, not a verdict to believe: schema, sizes, ids, paths, counts.
    const reports = files.map((f) => readReportFile(resolve(f), f));
    const { report: merged, policySource } = await mergeShards(reports, {
      config: values.config,
      cwd: process.cwd(),
      unverified: values.unverified ? 'the reports were passed with --unverified' : undefined,
    });
    process.stderr.write(`stategate: gating with ${policySource}\n`);
    const out = resolve(values.out ?? '.stategate');
    const result = writeReports(merged, out);
    finish(merged, values, result.reportPath);
    return exitCodeFor(merged.verdict, level);
  } catch (err) {
    if (err instanceof ConfigError) {
      printProblems(err.problems);
      return 1;
    }
    return fail((err as Error).message);
  }
}

export async function commandDemo(values: CliValues): Promise<number> {
  try {
    const options = {
      engine: engineOption(values),
      databaseUrl: values['database-url'],
      out: values.out,
      color: !values['no-color'] && Boolean(process.stdout.isTTY),
    };
    if (values.flaky) {
      await runFlakyDemo(options);
      return 0;
    }
    return await runDemo(options);
  } catch (err) {
    if (err instanceof ConfigError) {
      printProblems(err.problems);
      return 1;
    }
    return fail((err as Error).message);
  }
}
