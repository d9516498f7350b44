// loadSuite: stategate.yml, the twin and scenario files its globs match, and the template files,
// validated together. Every problem from every file comes back at once, each with file:line:col.
import path from 'node:path';
import { readConfig } from './config-file.js';
import { expandEnv } from './env-expand.js';
import { inputSchemaChecker } from './input-schema.js';
import {
  calibrationPath,
  DEFAULT_CALIBRATION_FILE,
  type JudgeCalibration,
  loadJudgeCalibration,
} from './judge-files.js';
import { readScenario } from './scenario-file.js';
import type { Scenario, Tool } from './schema.js';
import { displayPath, readTextFile, suitePath } from './source-file.js';
import type { LoadResult, Problem, Suite } from './suite.js';
import { type ParsedFile, suiteChecks, type TwinNames } from './suite-checks.js';
import { globInside, namedFileProblem, realPlace, type SuiteDir, suiteDir } from './suite-paths.js';
import { loadTemplateFiles, type NamedFile } from './template-files.js';
import { readTwinFile } from './twin-file.js';
import { parseYaml, problemAt, type YamlSource } from './yaml-source.js';

export {
  bindNamedParams,
  collectSqlStatements,
  type SqlStatement,
  splitStatements,
} from './sql-statements.js';

export interface LoadOptions {
  /** Where `${VAR}` expands from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Read twins, scenarios, schema and fixtures from here instead of the config file's directory. */
  suiteRoot?: string;
}

/** Loads and validates a suite: the Suite, or every problem in every file. */
export async function loadSuite(configPath: string, opts: LoadOptions = {}): Promise<LoadResult> {
  const env = opts.env ?? process.env;
  const configAbs = path.resolve(configPath);
  const root = path.resolve(opts.suiteRoot ?? path.dirname(configAbs));
  // The config itself may be a link too: it must really be in its own directory.
  const configDir = path.dirname(configAbs);
  if ((await realPlace(await suiteDir(configDir), configAbs)) === 'outside') {
    const message = `${path.basename(configAbs)} is a link to a file outside ${displayPath(configDir)}: the config must be inside the directory it is in`;
    return { ok: false, problems: [{ file: displayPath(configAbs), line: 1, col: 1, message }] };
  }
  const read = await readTextFile(configAbs, displayPath(configAbs));
  if (!read.ok) return { ok: false, problems: [read.problem] };
  let unset = new Set<string | undefined>();
  const parsed = parseYaml(displayPath(configAbs), read.text, (source) => {
    const envProblems = expandEnv(source, env);
    unset = new Set(envProblems.map((p) => p.path));
    return envProblems;
  });
  const problems: Problem[] = [...parsed.problems];
  if (parsed.value === undefined) return { ok: false, problems };
  const { config, database, lists, problems: configProblems } = readConfig(parsed.value, parsed.source);
  // A field holding an unexpanded `${VAR}` is already reported as the unset variable.
  problems.push(...configProblems.filter((p) => !unset.has(p.path)));
  if (!lists) return { ok: false, problems };

  const files: Record<string, string> = {};
  const dir = await suiteDir(root);
  const before = problems.length;
  const twinRels = await expandGlobs(lists.twins, dir, parsed.source, problems);
  // With a twin glob matching nothing, any tool may be missing: "unknown tool" would only be noise.
  let twinsComplete = problems.length === before;
  const scenarioRels = await expandGlobs(lists.scenarios, dir, parsed.source, problems);
  const [twinRead, scenarioRead, template] = await Promise.all([
    readYamlFiles(twinRels, root, files, problems),
    readYamlFiles(scenarioRels, root, files, problems),
    loadTemplateFiles(lists.schema, lists.fixtures, dir, parsed.source, files),
  ]);
  problems.push(...template.problems);
  const twinFiles = twinRead.parsed;
  twinsComplete &&= twinRead.unreadable === 0;
  const scenarioFiles = scenarioRead.parsed;

  const tools = new Map<string, Tool>();
  const twinNames: TwinNames[] = [];
  const checker = inputSchemaChecker();
  for (const twin of twinFiles) {
    if (twin.value === undefined) {
      twinNames.push({ ...twin, names: [] });
      continue;
    }
    const result = readTwinFile(twin.value, twin.source, twin.rel, checker);
    problems.push(...result.problems);
    twinNames.push({ ...twin, names: result.names });
    for (const tool of result.tools) if (!tools.has(tool.name)) tools.set(tool.name, tool);
  }
  const scenarios: Scenario[] = [];
  for (const file of scenarioFiles) {
    if (file.value === undefined) continue;
    const result = readScenario(file.value, file.source, file.rel);
    problems.push(...result.problems);
    if (result.scenario) scenarios.push(result.scenario);
  }
  problems.push(...suiteChecks(twinNames, scenarioFiles, config, { twinsComplete }));
  let judgeCalibration: JudgeCalibration | null = null;
  if (config?.judge) {
    const named = config.judge.calibration
      ? { name: config.judge.calibration, field: ['judge', 'calibration'] }
      : { name: DEFAULT_CALIBRATION_FILE, field: ['judge'] };
    const outside = await namedFileProblem(parsed.source, named, dir);
    const calibration = outside
      ? { ok: false as const, problems: [outside] }
      : await loadJudgeCalibration(calibrationPath(root, config.judge), root);
    if (calibration.ok) judgeCalibration = calibration.value;
    else problems.push(...calibration.problems);
  }

  if (problems.length > 0 || !config) {
    // The SQL of what did load can still be checked, when the template and its database can be built.
    const databaseSound = database && !problems.some((p) => p.path?.startsWith('database'));
    const parts =
      databaseSound && template.problems.length === 0
        ? {
            configFile: configAbs,
            root,
            config: config?.ignore_columns
              ? { database, ignore_columns: config.ignore_columns }
              : { database },
            scenarios,
            tools,
            template: template.template,
            files,
          }
        : undefined;
    return { ok: false, problems: sortProblems(problems), ...(parts ? { parts } : {}) };
  }
  const suite: Suite = {
    configFile: configAbs,
    root,
    config,
    scenarios,
    tools,
    template: template.template,
    files,
    judgeCalibration,
  };
  return { ok: true, suite };
}

/**
 * Expands each glob inside the suite directory (sorted, without duplicates); a glob matching
 * nothing, leaving the directory or matching a link out of it is a problem at its entry.
 */
async function expandGlobs(
  patterns: NamedFile[],
  dir: SuiteDir,
  config: YamlSource,
  problems: Problem[],
): Promise<string[]> {
  const matches = await Promise.all(patterns.map((p) => globInside(config, p, dir)));
  const all = new Set<string>();
  matches.forEach((found, i) => {
    problems.push(...found.problems);
    if (found.files.length === 0 && found.problems.length === 0) {
      const message = `'${patterns[i].name}' matches no file in ${displayPath(dir.root)}`;
      problems.push(problemAt(config, patterns[i].field, message));
    }
    for (const f of found.files) all.add(f);
  });
  return [...all].sort();
}

/** Reads and parses YAML files; read and syntax problems are collected, raw text kept for hashing. */
async function readYamlFiles(
  rels: string[],
  root: string,
  files: Record<string, string>,
  problems: Problem[],
): Promise<{ parsed: ParsedFile[]; unreadable: number }> {
  const out = await mapLimited(rels, async (name) => {
    const abs = path.resolve(root, name);
    const rel = suitePath(root, abs);
    const read = await readTextFile(abs, displayPath(abs));
    if (!read.ok) return { problem: read.problem };
    files[rel] = read.text;
    const parsed = parseYaml(displayPath(abs), read.text);
    return { file: { rel, source: parsed.source, value: parsed.value }, problems: parsed.problems };
  });
  const parsed: ParsedFile[] = [];
  let unreadable = 0;
  for (const r of out) {
    if ('problem' in r) {
      problems.push(r.problem as Problem);
      unreadable++;
    } else {
      problems.push(...r.problems);
      parsed.push(r.file);
    }
  }
  return { parsed, unreadable };
}

/** Maps with at most `limit` calls in flight, so a glob matching thousands of files cannot exhaust descriptors. */
async function mapLimited<T, R>(items: T[], fn: (item: T) => Promise<R>, limit = 32): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Problems by file, then position: the order a reader fixes them in. */
export function sortProblems(problems: Problem[]): Problem[] {
  return [...problems].sort((a, b) =>
    a.file !== b.file ? (a.file < b.file ? -1 : 1) : a.line !== b.line ? a.line - b.line : a.col - b.col,
  );
}
