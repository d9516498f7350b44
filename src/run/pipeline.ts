// The pipeline of `stategate compare`, `stategate run` and the action: base and head as a pinned pair.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isolationLine, probeIsolation } from '../agent/namespace.js';
import { sharedPortProblem } from '../agent/port.js';
import type { AgentConfig } from '../config/schema.js';
import { ConfigError, type Suite } from '../config/suite.js';
import { createGateway } from '../gateway/index.js';
import { gradeEpisode, regradeEpisode } from '../grade/index.js';
import { judgeClientOptions, judgeEpisode } from '../judge/episode.js';
import { canonicalJson } from '../model/canonical-json.js';
import type { EpisodeRecord, RefusedCall, Side } from '../model/episode.js';
import { expandEpisodes, type PlannedEpisode, sliceScenarios } from '../plan/expand.js';
import { pinSuite, sha256 } from '../plan/pin.js';
import { chooseEngine } from '../sandbox/index.js';
import type { Engine } from '../sandbox/types.js';
import { VERSION } from '../version.js';
import { adaptivePolicy, runAdaptive } from './adaptive.js';
import type { BaselineStored, CompareOptions, CompareResult, ProgressEvent } from './api.js';
import { BaselineCache, type BaselineKeyParts, seedsHash } from './baseline-cache.js';
import { type Checkout, checkoutLabel, resolveCheckout, sameFiles } from './checkout.js';
import { runEpisode } from './episode.js';
import { CaseSpool, EpisodeLog } from './episode-log.js';
import { EpisodeSignals } from './episode-signals.js';
import { onInterrupt } from './interrupt.js';
import { loadPinnedSuite, loadSideConfig } from './load.js';
import { policyWords, resolvePolicy } from './policy.js';
import { prepareSuiteSql, refusedSuiteProblems } from './prepare-suite.js';
import { reportFromSpool, writeReports } from './run-report.js';
import { schedule } from './scheduler.js';
import { prepareSide, type SideRuntime, withIsolation } from './side.js';

/** Runs the pair (or head alone when `base` is null), writes the reports, and returns them. */
export async function runCompare(opts: CompareOptions): Promise<CompareResult> {
  const repo = resolve(opts.repo ?? process.cwd());
  const outDir = resolve(repo, opts.out ?? '.stategate');
  const configName = opts.config ?? 'stategate.yml';
  const progress = opts.onProgress ?? (() => undefined);
  const startedAt = new Date();
  const cacheDir = opts.cache ? resolve(repo, opts.cache) : null;
  mkdirSync(outDir, { recursive: true });
  // Made before any agent starts: only a folder that exists is hidden from the agents.
  if (cacheDir) mkdirSync(cacheDir, { recursive: true });

  const controller = new AbortController();
  const abort = () => controller.abort();
  opts.signal?.addEventListener('abort', abort);
  const cleanups: (() => Promise<void>)[] = [];
  const stopInterrupt = onInterrupt(abort);

  try {
    progress({ type: 'phase', phase: 'checkout', message: 'Checking out the sides' });
    const checkouts: Partial<Record<Side, Checkout>> = {};
    const sides: Side[] = opts.base === null ? ['head'] : ['base', 'head'];
    for (const side of sides) {
      const spec = side === 'head' ? opts.head : (opts.base as string);
      // The run's own output (and its cache) is no uncommitted change of the side it runs.
      const checkout = await resolveCheckout(spec, repo, {
        ignore: cacheDir ? [outDir, cacheDir] : [outDir],
      });
      cleanups.push(() => checkout.dispose());
      checkouts[side] = checkout;
      for (const message of checkout.warnings ?? [])
        progress({ type: 'log', level: 'warn', message: `${side}: ${message}` });
      if (checkout.dirty) {
        progress({ type: 'log', level: 'warn', message: `${side}: ${checkoutLabel(checkout)}` });
      }
    }
    if (sameFiles(checkouts.base, checkouts.head)) {
      progress({
        type: 'log',
        level: 'warn',
        message: 'base and head are the same files: the comparison cannot show what a change does',
      });
    }

    const suiteSide: Side = opts.suiteFrom === 'base' && checkouts.base ? 'base' : 'head';
    const suiteCheckout = checkouts[suiteSide]!;
    progress({
      type: 'phase',
      phase: 'load',
      message: `Loading the suite from ${suiteSide} (${suiteCheckout.ref})`,
    });
    const policy = await resolvePolicy({
      policyFrom: opts.policyFrom ?? 'base',
      pinned: await loadPinnedSuite(join(suiteCheckout.dir, configName)),
      pinnedSide: suiteSide,
      base: checkouts.base,
      configName,
    });
    if (policy.warning) progress({ type: 'log', level: 'warn', message: policy.warning });
    progress({ type: 'log', level: 'info', message: `gate policy: ${policyWords(policy.source)}` });
    // The suite as it runs: the pinned scenarios, twins and template under the policy's gate and repeats.
    const suite = policy.suite;
    const pin = pinSuite(suite);
    const repeats = opts.repeats ?? fixedRepeats(suite);
    const concurrency = opts.concurrency ?? suite.config.concurrency;
    const scenarios = sliceScenarios(suite.scenarios, opts.shard);
    const agents: Partial<Record<Side, AgentConfig>> = {};
    // A head cannot leave the container its base runs in (base comes first).
    let isolationMode = opts.isolation;
    for (const side of sides) {
      const configFile = join(checkouts[side]!.dir, configName);
      const agent = withIsolation(await loadSideConfig(configFile, suite, side), isolationMode, configFile);
      if (side === 'base' && agent.isolation === 'container') isolationMode ??= 'container';
      agents[side] = agent;
    }
    // Two sides on one literal port would share one server: the head could run as the base.
    const sharedPort = sharedPortProblem(agents);
    if (sharedPort) throw new Error(sharedPort);

    progress({ type: 'phase', phase: 'engine', message: 'Starting the database engine' });
    const engine: Engine = await chooseEngine(databaseFor(suite, opts), {
      engine: opts.engine,
      engineOption: opts.engineOption,
    });
    cleanups.push(() => engine.close());
    const engineDetail = engine.detail ? `; ${engine.detail}` : '';
    progress({
      type: 'log',
      level: 'info',
      message: `engine: ${engine.name} (${engine.reason}${engineDetail})`,
    });
    const template = await engine.buildTemplate(suite.template);
    if (template.hash !== pin.templateHash) pin.templateHash = template.hash;
    // A statement that cannot prepare would fail inside the harness in every episode of both sides.
    progress({ type: 'phase', phase: 'prepare', message: 'Preparing every SQL statement of the suite' });
    const refused = await prepareSuiteSql(suite, template);
    if (refused.length > 0) throw new ConfigError(refusedSuiteProblems(refused));
    // The run's databases, made while the sides start: one per episode running at once and as many
    // spare (episodes of one wave finish together, and each waits for a database while its own is
    // put back), never more than the episodes need. A stale_response episode holds two.
    const perEpisode = scenarios.some((s) => s.faults.some((f) => f.fault === 'stale_response')) ? 2 : 1;
    const episodesAtMost = scenarios.length * sides.length * (opts.repeats ?? maxRepeats(suite));
    const reserving = template.reserve(Math.min(2 * concurrency, episodesAtMost) * perEpisode);

    // Judge and adaptive-repeat hooks: `judge:` grades judge expectations; `repeats: {min, max}`
    // (unless --repeats is given) runs looks until the sequential test decides each case.
    const judge = suite.config.judge ? judgeClientOptions(suite.config.judge, process.env) : null;
    const sequential = opts.repeats === undefined ? adaptivePolicy(suite.config.repeats) : null;
    const baseline =
      cacheDir && checkouts.base
        ? openBaseline(cacheDir, checkouts.base, progress, {
            suite_hash: pin.suiteHash,
            template_hash: pin.templateHash,
            seeds: seedsHash(
              pin.suiteHash,
              scenarios.map((s) => s.id),
              sequential?.min ?? repeats,
            ),
            repeats: sequential ? { min: sequential.min, max: sequential.max } : repeats,
            engine: engine.name,
            stategate: VERSION,
            config: configName,
            isolation: agents.base!.isolation,
            // Hashed: the entry file lists its key's parts, and the section is not the file's to show.
            judge: suite.config.judge ? sha256(canonicalJson(suite.config.judge)) : null,
            shard: opts.shard && opts.shard.total > 1 ? opts.shard : null,
          })
        : null;
    // A base the cache holds in full is not even set up: its agent never starts.
    const baseFromCache =
      baseline?.covers(
        scenarios.map((s) => s.id),
        sequential?.max ?? repeats,
      ) ?? false;

    const gateway = await createGateway();
    cleanups.push(() => gateway.close());

    // Said once per run, in the log and the report: what keeps the agent away from the harness.
    const isolation = await probeIsolation();
    const isolationNote = isolationLine(isolation);
    progress({
      type: 'log',
      level: isolation.mode === 'namespaces' ? 'info' : 'warn',
      message: isolationNote,
    });
    const runtimes: Partial<Record<Side, SideRuntime>> = {};
    for (const side of sides) {
      const checkout = checkouts[side]!;
      if (side === 'base' && baseFromCache) continue;
      progress({ type: 'phase', phase: 'setup', message: `Preparing ${side} (${checkout.ref})` });
      const runtime = await prepareSide({
        side,
        checkout,
        agent: agents[side]!,
        outDir,
        harnessEnv: process.env,
        judgeKeyEnv: suite.config.judge?.api_key_env,
        isolation,
        // The other side's files are not this agent's to read or change.
        hide: [
          outDir,
          ...(cacheDir ? [cacheDir] : []),
          ...sides.filter((s) => s !== side).map((s) => checkouts[s]!.dir),
        ],
        onLog: (message) => progress({ type: 'log', level: 'info', message }),
      });
      cleanups.push(() => runtime.stop());
      runtimes[side] = runtime;
    }

    const planned = expandEpisodes(scenarios, sides, repeats, pin.suiteHash);
    await reserving;
    progress({
      type: 'phase',
      phase: 'episodes',
      message: `Running ${planned.length} episodes (${scenarios.length} scenarios x ${repeats} repeats x ${sides.length} sides, ${concurrency} at once)`,
    });
    const log = new EpisodeLog(join(outDir, 'episodes.jsonl'));
    cleanups.push(() => log.close());
    const spool = new CaseSpool(
      mkdtempSync(join(outDir, 'spool-')),
      scenarios.map((s) => s.id),
    );
    cleanups.push(() => spool.dispose());

    const cacheKey = (p: PlannedEpisode) => {
      const c = checkouts[p.side]!;
      return [c.dir, c.sha ?? '', pin.suiteHash, p.scenario.id, p.repeat, p.seed].join('\0');
    };
    // Episodes listen on signals of their own, so the run's carries one listener however many run at once.
    const episodeSignals = new EpisodeSignals(controller.signal);
    const run = async (p: PlannedEpisode): Promise<EpisodeRecord> => {
      // The same checkout on the same pinned suite and seed already ran in this process (the
      // demo compares three versions pairwise): reuse its record under this side's name.
      const cached = opts.episodeCache?.get(cacheKey(p));
      if (cached) return { ...cached, episode: p.id, side: p.side };
      const runtime = runtimes[p.side];
      if (!runtime)
        throw new Error(
          `${p.id}: the ${p.side} side was not prepared (its episodes were expected from the cache)`,
        );
      const episodeSignal = episodeSignals.open();
      let record: EpisodeRecord;
      try {
        record = await runEpisode(
          {
            template,
            gateway,
            tools: suite.tools,
            side: runtime,
            expose: suite.config.database.expose,
            signal: episodeSignal.signal,
            pin,
          },
          p,
        );
      } finally {
        episodeSignal.release();
      }
      if (!record.infraError) opts.episodeCache?.set(cacheKey(p), record);
      return record;
    };
    // Every episode passes through runBatch once, so the episodes not yet started bound the databases
    // still to be taken: a database whose put-back no later episode needs is not put back now.
    const mostEpisodes = scenarios.length * sides.length * (sequential?.max ?? repeats);
    let episodesStarted = 0;
    template.expectTakes(mostEpisodes * perEpisode);
    // Adaptive looks run one batch each; the counter goes on across them instead of starting over.
    let episodesBefore = 0;
    const runBatch = async (batch: PlannedEpisode[]) => {
      const before = episodesBefore;
      episodesBefore += batch.length;
      return schedule(
        batch,
        // Graded episodes go to disk here and only whether they passed stays in memory, so a run of
        // any length holds no more than the episodes running at once.
        async (p) => {
          episodesStarted++;
          template.expectTakes(Math.max(0, mostEpisodes - episodesStarted) * perEpisode);
          // A base episode from the baseline cache: its record is graded again here (only the judge's
          // verdicts are taken as stored), so a cache entry can hold evidence but never a verdict.
          const cached = baseline?.take(p);
          if (cached) {
            const reused = regradeEpisode(p.scenario, cached, suite.tools);
            await log.write(reused);
            await spool.write(reused);
            return reused.passed;
          }
          const record = await run(p);
          const judged = await judgeEpisode(p.scenario, record, judge);
          const g = gradeEpisode(p.scenario, record, suite.tools, judged.results);
          await log.write(g);
          await spool.write(g);
          return g.passed;
        },
        {
          concurrency,
          signal: controller.signal,
          onDone: (passed, p, done, total) => {
            progress({
              type: 'episode',
              done: before + done,
              total: before + total,
              scenario: p.scenario.id,
              side: p.side,
              passed,
            });
          },
        },
      );
    };
    if (sequential) {
      await runAdaptive({
        scenarios,
        sides,
        suiteHash: pin.suiteHash,
        policy: sequential,
        runBatch: async (batch) => void (await runBatch(batch)),
        episodesOf: (id) => spool.read(id),
        signal: controller.signal,
      });
    } else await runBatch(planned);
    await log.close();
    reportRefused(gateway.refused(), gateway.refusedCount(), progress);
    let baselineStored: BaselineStored | undefined;
    if (baseline) {
      const stored = baseline.store({
        scenarioIds: scenarios.map((s) => s.id),
        episodesOf: (id) => spool.read(id),
        minRepeats: sequential?.min ?? repeats,
        interrupted: controller.signal.aborted,
        startedAt,
      });
      if ('written' in stored && stored.written) baselineStored = stored.written;
      progress({
        type: 'log',
        level: 'info',
        message:
          'reason' in stored
            ? `baseline cache: the base's episodes were not stored: ${stored.reason}`
            : stored.stored > 0
              ? `baseline cache: stored ${stored.stored} base episodes under key ${baseline.key.slice(0, 12)}`
              : 'baseline cache: every base episode came from the cache; nothing new to store',
      });
    }

    progress({ type: 'phase', phase: 'report', message: 'Classifying and writing the report' });
    const report = reportFromSpool(spool, {
      scenarios,
      suite,
      pin,
      engine,
      checkouts,
      repeats,
      sequential,
      shard: opts.shard ?? null,
      interrupted: controller.signal.aborted,
      startedAt,
      headOnly: opts.base === null,
      policyFrom: policy.source,
      suiteChanges: policy.changes,
      agentIsolation: { mode: isolation.mode, note: isolationNote },
      baselineCache: baseline?.facts(),
    });
    return { ...writeReports(report, outDir), ...(baselineStored ? { baselineStored } : {}) };
  } finally {
    stopInterrupt();
    opts.signal?.removeEventListener('abort', abort);
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

/**
 * Opens the baseline cache for the base checkout, or says why a base is never cached: only a clean
 * git tree names exactly the files that ran.
 */
function openBaseline(
  dir: string,
  base: Checkout,
  progress: (event: ProgressEvent) => void,
  parts: Omit<BaselineKeyParts, 'base_tree'>,
): BaselineCache | null {
  const warn = (message: string) => progress({ type: 'log', level: 'warn', message });
  if (base.dirty || typeof base.tree !== 'string') {
    warn(
      `baseline cache: not used: the base ${base.dirty ? 'has uncommitted changes' : 'is not a git checkout'}, so no tree names the files that run`,
    );
    return null;
  }
  const cache = BaselineCache.open(dir, { base_tree: base.tree, ...parts }, warn);
  const stored = cache.entryStoredAt;
  progress({
    type: 'log',
    level: 'info',
    message:
      cache.size > 0
        ? `baseline cache: ${cache.size} base episodes cached under key ${cache.key.slice(0, 12)} (stored ${stored})`
        : `baseline cache: no base episodes cached under key ${cache.key.slice(0, 12)}`,
  });
  return cache;
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

function fixedRepeats(suite: Suite): number {
  const r = suite.config.repeats;
  return typeof r === 'number' ? r : r.min;
}

function maxRepeats(suite: Suite): number {
  const r = suite.config.repeats;
  return typeof r === 'number' ? r : r.max;
}
