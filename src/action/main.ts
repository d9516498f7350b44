// The action's orchestration: inputs, base, engine, posting, outputs. One try/catch ends in setFailed.
import { writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import * as core from '@actions/core';
import { ensureBubblewrap } from '../agent/bubblewrap-install.js';
import { ConfigError, type Problem } from '../config/suite.js';
import { gateFails } from '../gate/verdict.js';
import type { Report } from '../model/report.js';
import { mdBlock, mdCode, mdText } from '../report/escape.js';
import { renderJunit } from '../report/junit.js';
import { renderMarkdown } from '../report/markdown.js';
import type { CompareResult, ProgressEvent } from '../run/api.js';
import { mergeShards } from '../run/merge-shards.js';
import { runCompare } from '../run/pipeline.js';
import { writeReports } from '../run/run-report.js';
import { VERSION } from '../version.js';
import { caseAnnotations, repositoryPaths } from './annotations.js';
import { resolveBase } from './base.js';
import {
  type CachePlan,
  cachePlan,
  cacheRefusal,
  cacheSaveRefusal,
  restoreBaseline,
  saveBaseline,
  treeOf,
} from './baseline-cache.js';
import { CHECK_NAME, checkConclusionOf, checkTitle, UNVERIFIED_CHECK_NAME } from './check-run.js';
import { type EventContext, readEvent } from './event.js';
import { checkHead } from './head.js';
import { type ActionInputs, parseInputs } from './inputs.js';
import { setOutputs } from './outputs.js';
import { Posting, type Say } from './posting.js';
import { placeProblem, problemAnnotations } from './problems.js';
import { readShardReports } from './shard-reports.js';
import { writeSummary } from './summary.js';
import { untrustedReason } from './trust.js';

const say: Say = { info: (m) => core.info(m), warning: (m) => core.warning(m) };

/** Runs the action: compare (or one shard, or a merge of shards), then report and gate. */
export async function run(): Promise<void> {
  const groups = new PhaseGroups();
  const workspace = resolve(process.env.GITHUB_WORKSPACE || process.cwd());
  let posting: Posting | null = null;
  try {
    const inputs = parseInputs((name) => core.getInput(name));
    if (inputs.token) core.setSecret(inputs.token);
    forgetInputs();
    const event = readEvent(process.env);
    const outDir = resolve(workspace, inputs.out);

    if (inputs.shard) {
      const result = await compare(inputs, event, workspace, outDir, groups);
      groups.close();
      setOutputs(result.report, result.reportPath);
      writeJunit(inputs, workspace, result.report);
      core.info(
        `Shard ${inputs.shard.index}/${inputs.shard.total}: ${result.report.verdict} for its slice, report at ${relative(workspace, result.reportPath)}. ` +
          'Nothing is posted and the step does not gate: the merge job does both.',
      );
      return;
    }

    const untrusted = untrustedReason(event, inputs.reportsFrom, inputs.merge !== null);
    if (untrusted) {
      core.warning(
        `Unverified results: ${untrusted}. They are posted as the check run "${UNVERIFIED_CHECK_NAME}", neutral at best (failure on BLOCK).`,
      );
    }

    posting = await Posting.create(
      inputs.token,
      process.env.GITHUB_API_URL || 'https://api.github.com',
      event,
      say,
      untrusted ? UNVERIFIED_CHECK_NAME : CHECK_NAME,
    );
    await posting.start(detailsUrl());
    const result = inputs.merge
      ? await merge(inputs, workspace, outDir, groups, untrusted)
      : unverified(await compare(inputs, event, workspace, outDir, groups), untrusted, outDir);
    groups.close();
    await publish(result, inputs, workspace, posting);
  } catch (err) {
    groups.close();
    await fail(err, workspace, posting);
  }
}

async function compare(
  inputs: ActionInputs,
  event: EventContext,
  workspace: string,
  outDir: string,
  groups: PhaseGroups,
): Promise<CompareResult> {
  groups.open('Resolving the base');
  await checkHead(event, workspace, inputs.headPath);
  const base = await resolveBase({ baseRef: inputs.baseRef, eventBaseSha: event.baseSha }, workspace);
  if (base === null) {
    core.notice(
      'No base: the event has no base commit and base-ref is empty, so the head runs alone and is reported as such.',
    );
  } else {
    core.info(
      `base ${base.sha} (from ${base.source === 'event' ? `the ${event.name} event` : 'base-ref'}${base.fetched ? ', fetched from origin' : ''})`,
    );
  }
  const plan = base ? await baselinePlan(inputs, event, workspace, base.sha) : null;
  if (plan) await restoreBaseline(plan, say);
  const bwrap = await bubblewrapFor(inputs);
  const result = await runCompare({
    base: base?.sha ?? null,
    // The head as checked out (the workspace, or head-path); '.' reads better than a runner path.
    head: inputs.headPath,
    repo: workspace,
    config: inputs.config,
    repeats: inputs.repeats ?? undefined,
    shard: inputs.shard,
    out: outDir,
    engine: inputs.engine ?? undefined,
    engineOption: 'input engine:',
    policyFrom: inputs.policyFrom,
    isolation: inputs.isolation ?? undefined,
    sudo: inputs.sudo,
    bwrap,
    cache: plan?.dir,
    onProgress: (e) => groups.progress(e),
  });
  if (plan && result.baselineStored) {
    const refusal = cacheSaveRefusal(event);
    if (refusal) core.info(`cache: the base's episodes were not saved: ${refusal}.`);
    else await saveBaseline(plan, result.baselineStored, say);
  }
  return result;
}

/**
 * bwrap for the agents' sandbox: installed first where it is missing (GitHub's hosted runners ship
 * without it) and may be (src/agent/bubblewrap-install.ts); undefined leaves the probe to PATH. A
 * failed install was said as a warning, and the run then probes and refuses as without it.
 */
async function bubblewrapFor(inputs: ActionInputs): Promise<string | undefined> {
  // Containers for both sides need no sandbox; install-bubblewrap: false installs nothing.
  if (inputs.isolation === 'container' || !inputs.installBubblewrap) return undefined;
  const found = await ensureBubblewrap({
    sudo: inputs.sudo,
    log: (level, message) => (level === 'warn' ? core.warning(message) : core.info(message)),
  });
  if (found.state === 'not-attempted') core.info(`bubblewrap not installed: ${found.reason}`);
  return found.state === 'present' || found.state === 'installed' ? found.bwrap : undefined;
}

/** The baseline cache of a trusted run with `cache: true`; null (and says why) otherwise. */
async function baselinePlan(
  inputs: ActionInputs,
  event: EventContext,
  workspace: string,
  baseSha: string,
): Promise<CachePlan | null> {
  if (!inputs.cache) {
    core.info('cache: false, so the base runs in full.');
    return null;
  }
  const refusal = cacheRefusal(event, inputs.reportsFrom);
  if (refusal) {
    core.info(
      `cache: not used: ${refusal}. Only a run the base repository controls reads or writes the base's episodes.`,
    );
    return null;
  }
  const runnerTemp = process.env.RUNNER_TEMP;
  if (!runnerTemp) {
    core.info(
      'cache: RUNNER_TEMP is not set, so there is no runner folder to keep the base in; the base runs in full.',
    );
    return null;
  }
  return cachePlan({
    runnerTemp,
    version: VERSION,
    baseTree: await treeOf(workspace, baseSha),
    shard: inputs.shard,
    runId: process.env.GITHUB_RUN_ID || '0',
    runAttempt: process.env.GITHUB_RUN_ATTEMPT || '1',
  });
}

async function merge(
  inputs: ActionInputs,
  workspace: string,
  outDir: string,
  groups: PhaseGroups,
  untrusted: string | null,
): Promise<CompareResult> {
  groups.open('Merging shard reports');
  const shards = await readShardReports(inputs.merge!, workspace, resolve(outDir, 'report.json'));
  for (const s of shards)
    core.info(`${relative(workspace, s.file)}: ${s.report.cases.length} cases (its own verdict is not used)`);
  // The gate is this checkout's, never the one the reports carry.
  let merged: Report;
  try {
    const result = await mergeShards(
      shards.map((s) => s.report),
      {
        config: inputs.config === 'stategate.yml' ? undefined : inputs.config,
        cwd: workspace,
        unverified: untrusted ?? undefined,
      },
    );
    core.info(`Gating with ${result.policySource}.`);
    merged = result.report;
  } catch (err) {
    // The policy's own problems are the checkout's, with their file and line.
    if (configProblems(err)) throw err;
    // The merge numbers the reports; say which file each number is.
    const files = shards.map((s, i) => `report ${i + 1} = ${relative(workspace, s.file)}`).join(', ');
    throw new Error(`merge: ${(err as Error).message} (${files})`);
  }
  return writeReports(merged, outDir);
}

/** Marks a run's report unverified (and rewrites it) when the base repository does not control the run. */
function unverified(result: CompareResult, reason: string | null, outDir: string): CompareResult {
  if (reason === null) return result;
  return writeReports({ ...result.report, unverified: { reason } }, outDir);
}

async function publish(
  result: CompareResult,
  inputs: ActionInputs,
  workspace: string,
  posting: Posting,
): Promise<void> {
  const { report, reportPath } = result;
  const title = checkTitle(report);
  setOutputs(report, reportPath);
  if (!(await writeSummary(renderMarkdown(report, { variant: 'summary' })))) {
    core.info('GITHUB_STEP_SUMMARY is not set: no job summary written.');
  }
  writeJunit(inputs, workspace, report);

  // Annotation paths are paths in the head's repository; their lines are the ones each case carries.
  const headRoot = resolve(workspace, inputs.headPath);
  const pathOf = repositoryPaths(headRoot, dirname(resolve(headRoot, inputs.config)));
  await posting.complete({
    conclusion: checkConclusionOf(report),
    title,
    summary: renderMarkdown(report, { variant: 'check' }),
    annotations: caseAnnotations(report, pathOf),
  });
  if (inputs.comment) await posting.comment(renderMarkdown(report, { variant: 'comment' }));
  else core.info('comment: false, so no pull request comment.');

  core.info(`Report: ${relative(workspace, reportPath)}`);
  if (gateFails(report.verdict, inputs.failOn)) {
    core.setFailed(`Stategate ${title} (fail-on: ${inputs.failOn})`);
  } else {
    core.info(`Stategate ${title} (fail-on: ${inputs.failOn}: the step passes)`);
  }
}

function writeJunit(inputs: ActionInputs, workspace: string, report: Report): void {
  if (inputs.junit === null) return;
  const path = resolve(workspace, inputs.junit);
  writeFileSync(path, renderJunit(report));
  core.info(`JUnit XML: ${relative(workspace, path)}`);
}

async function fail(err: unknown, workspace: string, posting: Posting | null): Promise<void> {
  const problems = configProblems(err);
  if (problems) {
    const places = problems.map((p) => placeProblem(p, workspace));
    for (const p of places) {
      core.error(p.message, p.file ? { file: p.file, startLine: p.line, startColumn: p.col } : {});
    }
    const title = `Configuration error: ${problems.length} problem${problems.length === 1 ? '' : 's'}`;
    await posting?.complete({
      conclusion: 'failure',
      title,
      summary: places
        .map((p) => `- ${p.file ? `${mdCode(`${p.file}:${p.line}:${p.col}`)} ` : ''}${mdText(p.message)}`)
        .join('\n'),
      annotations: problemAnnotations(places),
    });
    core.setFailed(`${title} in the suite (each is annotated above).`);
    return;
  }
  const message = err instanceof Error ? err.message : String(err);
  // A refused report.json is named as such: the input was bad, not stategate.
  const refused = (err as { name?: string } | null)?.name === 'ReportError';
  await posting?.complete({
    conclusion: 'failure',
    title: refused ? 'Refused report.json: malformed or contradicting itself' : 'Stategate could not run',
    // The message may quote the suite, the agent, the database or a report: shown as text, never rendered.
    summary: refused
      ? message
          .split('\n')
          .map((l) => mdText(l))
          .join('\n\n')
      : mdBlock(message),
    annotations: [],
  });
  core.setFailed(message);
}

// Duck-typed as well: a ConfigError from another copy of the module still carries its problems.
function configProblems(err: unknown): Problem[] | null {
  if (err instanceof ConfigError) return err.problems;
  const e = err as { name?: string; problems?: unknown } | null;
  return e?.name === 'ConfigError' && Array.isArray(e.problems) ? (e.problems as Problem[]) : null;
}

// The agent's environment is built from an allow-list; dropping INPUT_* (the token among them) makes sure.
// The kernel keeps its copy in /proc/<pid>/environ: agents run in a PID namespace that cannot see it.
function forgetInputs(): void {
  for (const key of Object.keys(process.env)) if (key.startsWith('INPUT_')) delete process.env[key];
}

function detailsUrl(): string | undefined {
  const { GITHUB_SERVER_URL: server, GITHUB_REPOSITORY: repo, GITHUB_RUN_ID: id } = process.env;
  return server && repo && id ? `${server}/${repo}/actions/runs/${id}` : undefined;
}

/** Log groups per phase, and one line per graded episode. */
class PhaseGroups {
  private isOpen = false;

  open(title: string): void {
    this.close();
    core.startGroup(title);
    this.isOpen = true;
  }

  close(): void {
    if (this.isOpen) core.endGroup();
    this.isOpen = false;
  }

  progress(e: ProgressEvent): void {
    if (e.type === 'phase') this.open(e.message);
    else if (e.type === 'episode') {
      const result = e.passed === null ? 'not graded' : e.passed ? 'pass' : 'fail';
      core.info(`[${e.done}/${e.total}] ${e.scenario} (${e.side}): ${result}`);
    } else if (e.level === 'warn') core.warning(e.message);
    else core.info(e.message);
  }
}
