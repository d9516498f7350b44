// The executor: does what a run plan says, in one resource scope and one episode loop. The engine
// and template, the suite's SQL prepared, the run's databases, the gateway, each side's agent; then
// the adaptive loop (fixed repeats are one look) over the episode sources; then the report.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { uncalibratedJudges } from '../compare/summary.js';
import { ConfigError, type Suite } from '../config/suite.js';
import { simulatorEndpoint } from '../conversation/endpoint.js';
import { UserSimulator } from '../conversation/simulator.js';
import { createGateway, type Gateway } from '../gateway/index.js';
import { judgeCalibrationFacts } from '../judge/calibration.js';
import { judgeClientOptions } from '../judge/episode.js';
import type { GradedEpisode, RefusedCall, Side } from '../model/episode.js';
import type { PlannedEpisode } from '../plan/expand.js';
import { chooseEngine } from '../sandbox/index.js';
import type { Engine, Template } from '../sandbox/types.js';
import type { CaseDecision } from '../stats/case-decision.js';
import { runAdaptive } from './adaptive.js';
import type { BaselineStored, CompareOptions, CompareResult, ProgressEvent } from './api.js';
import { BaselineCache } from './baseline-cache.js';
import { countEnd, type EpisodeEnds, NothingCompletedError, nothingCompleted } from './episode-ends.js';
import { CaseSpool, EpisodeLog, episodeLine } from './episode-log.js';
import { EpisodeSignals } from './episode-signals.js';
import {
  baselineSource,
  type EpisodeSource,
  firstOf,
  freshSource,
  grader,
  INFRA_RETRIES,
  inRunKey,
  inRunSource,
} from './episode-source.js';
import type { RunPlan } from './plan.js';
import { prepareSuiteSql, refusedSuiteProblems } from './prepare-suite.js';
import { modelKeyEnvs, type RunModels, runModels } from './run-models.js';
import { type RunReportFacts, reportFromSpool, writeReports } from './run-report.js';
import { schedule } from './scheduler.js';
import type { ResourceScope } from './scope.js';
import { prepareSide, type SideRuntime } from './side.js';

export interface ExecuteContext {
  scope: ResourceScope;
  signal: AbortSignal;
  progress: (event: ProgressEvent) => void;
  /** How the engine was asked for, and the in-run cache (CompareOptions). */
  options: Pick<CompareOptions, 'engine' | 'engineOption' | 'databaseUrl' | 'episodeCache' | 'teardown'>;
}

/** Runs the plan's episodes, writes report.json and report.md, and returns them. */
export async function executeRun(plan: RunPlan, ctx: ExecuteContext): Promise<CompareResult> {
  const { scope, progress } = ctx;
  // Keys are read once, before any agent starts: an unset one stops the run here, not in every episode.
  const models = runModels(plan.suite.config, process.env, plan.suite.configFile);
  const gateway = await createGateway();
  scope.defer(() => gateway.close());
  progress({
    type: 'log',
    level: plan.isolationFacts.ran === 'none' || plan.agentNetwork === 'host' ? 'warn' : 'info',
    message: plan.isolationFacts.note,
  });
  const { engine, closeEngine, template, baseline, runtimes } = await startEngineAndSides(plan, ctx);

  const log = new EpisodeLog(join(plan.outDir, 'episodes.jsonl'));
  scope.defer(() => log.close());
  const spool = new CaseSpool(
    mkdtempSync(join(plan.outDir, 'spool-')),
    plan.scenarios.map((s) => s.id),
  );
  scope.defer(() => spool.dispose());

  const sources = episodeSources(plan, ctx, { template, gateway, runtimes, baseline, models });
  const { decisions, ends } = await runLoop(plan, template, firstOf(sources), { log, spool }, ctx);
  // Nothing asks a database after the last episode: the engine closes (dropping the run's databases,
  // or stopping its own server) while the report is written, not after it; with teardown 'detach',
  // a child process drops them and the run need not wait for it.
  // An interrupted run drops them itself: whoever stopped it may be about to stop the machine too.
  void closeEngine({ detach: ctx.options.teardown === 'detach' && !ctx.signal.aborted });
  await log.close();
  reportRefused(gateway.refused(), gateway.refusedCount(), progress);
  const baselineStored = baseline ? storeBaseline(plan, baseline, spool, ctx) : undefined;

  progress({ type: 'phase', phase: 'report', message: 'Classifying and writing the report' });
  const report = reportFromSpool(spool, {
    ...reportFacts(plan, engine, ctx.signal.aborted),
    decisions: ctx.signal.aborted ? undefined : decisions,
    baselineCache: baseline?.facts(),
  });
  const written = writeReports(report, plan.outDir);
  // A run in which no agent ran to its end tested nothing: it could not run, whatever the cases say.
  if (!ctx.signal.aborted) {
    const problem = nothingCompleted(ends, plan);
    if (problem) throw new NothingCompletedError(`${problem} The report is at ${written.reportPath}.`);
  }
  return { ...written, ...(baselineStored ? { baselineStored } : {}) };
}

/** The run's episode sources, asked in order: the baseline cache, the in-run cache, a fresh episode. */
function episodeSources(
  plan: RunPlan,
  ctx: ExecuteContext,
  started: {
    template: Template;
    gateway: Gateway;
    runtimes: Partial<Record<Side, SideRuntime>>;
    baseline: BaselineCache | null;
    models: RunModels | undefined;
  },
): EpisodeSource[] {
  const { template, gateway, runtimes, baseline, models } = started;
  const { progress } = ctx;
  const grade = grader(plan.suite.tools, judgeOf(plan.suite));
  const keyOf = (p: PlannedEpisode) => inRunKey(plan.checkouts[p.side]!, plan.pin, p);
  const records = ctx.options.episodeCache;
  return [
    ...(baseline ? [baselineSource(baseline, plan.suite.tools)] : []),
    ...(records ? [inRunSource(records, keyOf, grade)] : []),
    freshSource({
      template,
      gateway,
      tools: plan.suite.tools,
      runtimes,
      expose: plan.suite.config.database.expose,
      pin: plan.pin,
      models,
      signals: new EpisodeSignals(ctx.signal),
      grade,
      cache: records ? { records, keyOf } : undefined,
      players: userSimulatorOf(plan.suite.config),
      onRetry: (p, attempt, why) =>
        progress({
          type: 'log',
          level: 'warn',
          message: `${p.id}: could not be graded (${why}); running it again with the same seed (retry ${attempt} of ${INFRA_RETRIES})`,
        }),
    }),
  ];
}

/** What the report says of the run beside its cases. */
function reportFacts(plan: RunPlan, engine: Engine, interrupted: boolean): Omit<RunReportFacts, 'decisions'> {
  return {
    scenarios: plan.scenarios,
    suite: plan.suite,
    pin: plan.pin,
    engine,
    checkouts: plan.checkouts,
    repeats: plan.repeats.min,
    sequential: plan.repeats.sequential,
    shard: plan.shard ?? null,
    interrupted,
    startedAt: plan.startedAt,
    headOnly: plan.headOnly,
    policyFrom: plan.policy.source,
    suiteChanges: plan.policy.changes,
    agentIsolation: plan.isolationFacts,
    filter: plan.filter,
  };
}

/**
 * Starts the engine and template, and the sides' agents, at the same time: the agents need neither
 * (agent.serve's environment names no database; an exposed agent gets its URL per episode). Only
 * a baseline cache, whose key names the engine, needs the engine chosen before the sides start
 * (a base it holds in full is not even set up). Both starts run to their end before a failure of
 * either is thrown (the first to fail), so each has registered its release in the scope by then.
 */
async function startEngineAndSides(
  plan: RunPlan,
  ctx: ExecuteContext,
): Promise<{
  engine: Engine;
  /** Closes the engine now (once); the scope waits for it. */
  closeEngine: (opts?: { detach?: boolean }) => Promise<void>;
  template: Template;
  baseline: BaselineCache | null;
  runtimes: Partial<Record<Side, SideRuntime>>;
}> {
  const cached = baselineWanted(plan);
  const engineStart = openEngine(plan, ctx);
  const templateStart = engineStart.then(async ({ engine }) => {
    const template = await startTemplate(plan, engine, ctx);
    // The pool is made from here on, while the sides may still start and the episodes run: an
    // episode that asks before it is made takes the next database made (nothing waits for it all).
    void template.reserve(plan.databases.reserve).catch(() => undefined);
    // After reserve(): the database the statements were prepared on is put back into the pool.
    template.donePreparing();
    return template;
  });
  const sidesStart = (async () => {
    let baseline: BaselineCache | null = null;
    if (cached) baseline = openBaseline(plan, (await engineStart).engine.name, ctx.progress);
    // A base the cache holds in full is not even set up: its agent never starts.
    const baseFromCache =
      baseline?.covers(
        plan.scenarios.map((s) => s.id),
        plan.repeats.max,
      ) ?? false;
    return { baseline, runtimes: await startSides(plan, baseFromCache, ctx) };
  })();
  const [{ engine, close }, template, sides] = await allStarted(engineStart, templateStart, sidesStart);
  return { engine, closeEngine: close, template, ...sides };
}

/**
 * Waits for every start to end; throws the error of the first (in this order) that failed, else
 * returns them all. A start that is still running when another fails goes on to its end: its
 * release is then in the scope, which closes it with everything else.
 */
async function allStarted<A, B, C>(a: Promise<A>, b: Promise<B>, c: Promise<C>): Promise<[A, B, C]> {
  const [ra, rb, rc] = await Promise.allSettled([a, b, c]);
  for (const r of [ra, rb, rc]) if (r.status === 'rejected') throw r.reason;
  return [
    (ra as PromiseFulfilledResult<A>).value,
    (rb as PromiseFulfilledResult<B>).value,
    (rc as PromiseFulfilledResult<C>).value,
  ];
}

/** Whether a baseline cache may be opened for this run: openBaseline's first test (it decides the rest). */
function baselineWanted(plan: RunPlan): boolean {
  return Boolean(plan.cacheDir && plan.baselineKey && plan.checkouts.base);
}

/** Starts (or connects to) the database engine; `close` closes it now (the scope's release, started early). */
async function openEngine(
  plan: RunPlan,
  ctx: ExecuteContext,
): Promise<{ engine: Engine; close: (opts?: { detach?: boolean }) => Promise<void> }> {
  const { progress } = ctx;
  progress({ type: 'phase', phase: 'engine', message: 'Starting the database engine' });
  const engine = await chooseEngine(databaseFor(plan.suite, ctx.options), {
    engine: ctx.options.engine,
    engineOption: ctx.options.engineOption,
  });
  // The scope's release (on any failure: dropped here, waited for) unless the run ends normally
  // first and asks for its teardown (CompareOptions.teardown).
  let detach = false;
  const release = ctx.scope.defer(() => engine.close({ detach }));
  const close = (opts: { detach?: boolean } = {}) => {
    detach = opts.detach === true;
    return release();
  };
  const engineDetail = engine.detail ? `; ${engine.detail}` : '';
  progress({
    type: 'log',
    level: 'info',
    message: `engine: ${engine.name} (${engine.reason}${engineDetail})`,
  });
  return { engine, close };
}

/** Builds the template and prepares every SQL statement of the suite against it. */
async function startTemplate(plan: RunPlan, engine: Engine, ctx: ExecuteContext): Promise<Template> {
  const { progress } = ctx;
  const template = await engine.buildTemplate(plan.suite.template);
  // The template is built from exactly what the pin hashed; a different hash is a harness bug.
  if (template.hash !== plan.pin.templateHash)
    throw new Error(`the template's hash ${template.hash} is not the pinned ${plan.pin.templateHash}`);
  // A statement that cannot prepare would fail inside the harness in every episode of both sides.
  progress({ type: 'phase', phase: 'prepare', message: 'Preparing every SQL statement of the suite' });
  const refused = await prepareSuiteSql(plan.suite, template);
  if (refused.length > 0) throw new ConfigError(refusedSuiteProblems(refused));
  return template;
}

/** Runs agent.setup and starts agent.serve of each side that runs (a base wholly cached does not). */
async function startSides(
  plan: RunPlan,
  baseFromCache: boolean,
  ctx: ExecuteContext,
): Promise<Partial<Record<Side, SideRuntime>>> {
  const runtimes: Partial<Record<Side, SideRuntime>> = {};
  for (const side of plan.sides) {
    if (side === 'base' && baseFromCache) continue;
    const checkout = plan.checkouts[side]!;
    ctx.progress({ type: 'phase', phase: 'setup', message: `Preparing ${side} (${checkout.ref})` });
    const runtime = await prepareSide({
      side,
      checkout,
      agent: plan.agents[side]!,
      outDir: plan.outDir,
      harnessEnv: process.env,
      judgeKeyEnv: plan.suite.config.judge?.api_key_env,
      modelKeyEnvs: modelKeyEnvs(plan.suite.config),
      isolation: plan.isolation,
      network: plan.agentNetwork,
      // The other side's files are not this agent's to read or change.
      hide: [
        plan.outDir,
        ...(plan.cacheDir ? [plan.cacheDir] : []),
        ...plan.sides.filter((s) => s !== side).map((s) => plan.checkouts[s]!.dir),
      ],
      onLog: (message) => ctx.progress({ type: 'log', level: 'info', message }),
    });
    ctx.scope.defer(() => runtime.stop());
    runtimes[side] = runtime;
  }
  return runtimes;
}

/**
 * The one episode loop: looks of the adaptive policy (fixed repeats are one look at min = max),
 * each look's episodes on the scheduler's workers, every graded episode to disk as it finishes.
 * Returns the loop's last decision per case under the sequential test.
 */
async function runLoop(
  plan: RunPlan,
  template: Template,
  take: (p: PlannedEpisode) => Promise<GradedEpisode>,
  out: { log: EpisodeLog; spool: CaseSpool },
  ctx: ExecuteContext,
): Promise<{ decisions: Map<string, CaseDecision>; ends: EpisodeEnds }> {
  const { repeats, scenarios, sides } = plan;
  const ends: EpisodeEnds = { episodes: 0, completed: 0, failures: new Map() };
  const perEpisode = plan.databases.perEpisode;
  ctx.progress({
    type: 'phase',
    phase: 'episodes',
    message: `Running ${scenarios.length * repeats.min * sides.length} episodes (${scenarios.length} scenarios x ${repeats.min} repeats x ${sides.length} sides, ${plan.concurrency} at once)`,
  });
  // Every episode passes through here once, so the episodes not yet started bound the databases
  // still to be taken: a database whose put-back no later episode needs is not put back now.
  let started = 0;
  template.expectTakes(plan.databases.mostTakes);
  // Looks run one batch each; the counter goes on across them instead of starting over.
  let before = 0;
  const added = new Set(plan.added);
  const runBatch = async (looked: PlannedEpisode[]) => {
    // The base's scenarios first (a stable sort keeps the interleaving of base and head).
    const batch = [...looked].sort(
      (a, b) => Number(added.has(a.scenario.id)) - Number(added.has(b.scenario.id)),
    );
    const offset = before;
    before += batch.length;
    await schedule(
      batch,
      // Graded episodes go to disk here and only whether they passed stays in memory, so a run of
      // any length holds no more than the episodes running at once.
      async (p) => {
        started++;
        template.expectTakes(Math.max(0, plan.databases.mostTakes - started * perEpisode));
        const graded = await take(p);
        countEnd(ends, graded);
        const line = episodeLine(graded);
        await out.log.write(graded, line);
        await out.spool.write(graded, line);
        return graded.passed;
      },
      {
        concurrency: plan.concurrency,
        signal: ctx.signal,
        onDone: (passed, p, done, total) =>
          ctx.progress({
            type: 'episode',
            done: offset + done,
            total: offset + total,
            scenario: p.scenario.id,
            side: p.side,
            passed,
          }),
      },
    );
  };
  const calibrated = judgeCalibrationFacts(plan.suite)?.calibrated;
  const decisions = await runAdaptive({
    scenarios,
    sides,
    suiteHash: plan.pin.suiteHash,
    policy: repeats.sequential ?? { min: repeats.min, max: repeats.max },
    decide: repeats.sequential !== null,
    uncalibrated: (s) => uncalibratedJudges(s, calibrated),
    runBatch,
    episodesOf: (id) => out.spool.read(id),
    signal: ctx.signal,
  });
  return { decisions, ends };
}

/** Opens the baseline cache for the base checkout, or says why a base is never cached. */
function openBaseline(
  plan: RunPlan,
  engine: Engine['name'],
  progress: (event: ProgressEvent) => void,
): BaselineCache | null {
  const base = plan.checkouts.base;
  if (!plan.cacheDir || !plan.baselineKey || !base) return null;
  const warn = (message: string) => progress({ type: 'log', level: 'warn', message });
  // Only a clean git tree names exactly the files that ran.
  if (base.dirty || typeof base.tree !== 'string') {
    warn(
      `baseline cache: not used: the base ${base.dirty ? 'has uncommitted changes' : 'is not a git checkout'}, so no tree names the files that run`,
    );
    return null;
  }
  const cache = BaselineCache.open(
    plan.cacheDir,
    { base_tree: base.tree, ...plan.baselineKey, engine },
    warn,
  );
  progress({
    type: 'log',
    level: 'info',
    message:
      cache.size > 0
        ? `baseline cache: ${cache.size} base episodes cached under key ${cache.key.slice(0, 12)} (stored ${cache.entryStoredAt})`
        : `baseline cache: no base episodes cached under key ${cache.key.slice(0, 12)}`,
  });
  return cache;
}

/** Stores the base's episodes of a complete run in the baseline cache; says what it did. */
function storeBaseline(
  plan: RunPlan,
  baseline: BaselineCache,
  spool: CaseSpool,
  ctx: ExecuteContext,
): BaselineStored | undefined {
  const stored = baseline.store({
    scenarioIds: plan.scenarios.map((s) => s.id),
    episodesOf: (id) => spool.read(id),
    minRepeats: plan.repeats.min,
    interrupted: ctx.signal.aborted,
    startedAt: plan.startedAt,
  });
  ctx.progress({
    type: 'log',
    level: 'info',
    message:
      'reason' in stored
        ? `baseline cache: the base's episodes were not stored: ${stored.reason}`
        : stored.stored > 0
          ? `baseline cache: stored ${stored.stored} base episodes under key ${baseline.key.slice(0, 12)}`
          : 'baseline cache: every base episode came from the cache; nothing new to store',
  });
  return 'written' in stored && stored.written ? stored.written : undefined;
}

function judgeOf(suite: Suite) {
  return suite.config.judge ? judgeClientOptions(suite.config.judge, process.env) : null;
}

/**
 * The database section with the URL resolved: `databaseUrl`, else (when the postgres engine is asked
 * for by --engine) $STATEGATE_DATABASE_URL, else the config's url. The operator's server wins over the
 * file's: the file may be the head's, and the harness connects to that URL as an admin.
 */
export function databaseFor(
  suite: { config: Pick<Suite['config'], 'database'> },
  opts: Pick<CompareOptions, 'engine' | 'databaseUrl'>,
): Suite['config']['database'] {
  const db = suite.config.database;
  const url =
    opts.databaseUrl ??
    (opts.engine === 'postgres' ? process.env.STATEGATE_DATABASE_URL : undefined) ??
    db.url;
  return { ...db, url };
}

/** Says when requests came in under unknown episode URLs: an agent guessing at another episode. */
function reportRefused(
  refused: RefusedCall[],
  total: number,
  progress: (event: ProgressEvent) => void,
): void {
  if (total === 0) return;
  const shown = refused
    .slice(0, 5)
    .map((r) => r.path)
    .join(', ');
  const more = total > 5 ? `, and ${total - 5} more` : '';
  progress({
    type: 'log',
    level: 'warn',
    message: `the gateway refused ${total} request(s) to unknown episode URLs with 404: ${shown}${more}`,
  });
}

/** The run's user simulator (user_simulator with its models entry and the harness's key), if any. */
function userSimulatorOf(config: RunPlan['suite']['config']): UserSimulator | undefined {
  const endpoint = simulatorEndpoint(config, process.env);
  return endpoint ? new UserSimulator(endpoint) : undefined;
}
