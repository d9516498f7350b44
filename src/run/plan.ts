// The run plan: everything a run decides before its first episode, as a plain value. The checkouts,
// whose policy and suite apply, the pin, the shard slice, the repeats policy, each side's agent and
// isolation, the baseline cache's key and the databases to reserve are settled here; executeRun
// (run/execute.ts) then only does what the plan says.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { IsolationStatus } from '../agent/namespace.js';
import { probeIsolation } from '../agent/namespace.js';
import { sharedPortProblem } from '../agent/port.js';
import { sudoMode } from '../config/options.js';
import { unsetPassEnv, unsetPassEnvSentence } from '../config/pass-env.js';
import type { AgentConfig, Scenario } from '../config/schema.js';
import type { Suite } from '../config/suite.js';
import { contentHash } from '../model/content-hash.js';
import type { Side } from '../model/episode.js';
import type { AgentIsolationFacts, RunFilter } from '../model/report.js';
import { sliceScenarios } from '../plan/expand.js';
import { type PinnedSuite, pinSuite } from '../plan/pin.js';
import { filterScenarios, filterWords } from '../plan/scenario-filter.js';
import type { SequentialPolicy } from '../stats/sequential.js';
import { VERSION } from '../version.js';
import { adaptivePolicy } from './adaptive.js';
import type { CompareOptions, ProgressEvent } from './api.js';
import { type BaselineKeyParts, seedsHash } from './baseline-cache.js';
import { type Checkout, checkoutLabel, resolveCheckout, sameFiles } from './checkout.js';
import { ignoredHeadSettings, planIsolation, trustedBaseAgent } from './isolation-plan.js';
import { SuiteFiles } from './load.js';
import { policyWords, type RunPolicy, resolvePolicy } from './policy.js';
import type { ResourceScope } from './scope.js';
import { withIsolation } from './side.js';

/**
 * How many repeats each case gets. Fixed repeats are the adaptive loop with min = max: one look.
 * `sequential` is set only when the sequential test decides (min < max); the report says which ran.
 */
export interface RepeatsPlan {
  /** The repeats of the first look (the fixed count, or the adaptive min). */
  min: number;
  /** The most repeats a case can get. */
  max: number;
  sequential: SequentialPolicy | null;
}

/** The databases the run asks the engine for before its first episode. */
export interface DatabasePlan {
  /** Databases one episode holds: two with a stale_response fault, else one. */
  perEpisode: number;
  /** Made while the sides start: one per episode running at once and as many spare, at most what runs. */
  reserve: number;
  /** The most databases the run's episodes can take, for put-backs no episode will need. */
  mostTakes: number;
}

export interface RunPlan {
  repo: string;
  outDir: string;
  configName: string;
  cacheDir: string | null;
  startedAt: Date;
  /** ['base', 'head'], or ['head'] for a head-only run. */
  sides: Side[];
  headOnly: boolean;
  checkouts: Partial<Record<Side, Checkout>>;
  policy: RunPolicy;
  /** The suite as it runs: the pinned scenarios, twins and template under the policy. */
  suite: Suite;
  pin: PinnedSuite;
  /** This shard's scenarios (of those the filter selects), in the report's order. */
  scenarios: Scenario[];
  /** The --scenario / --tag filter and how much of the suite it selected; null: the whole suite. */
  filter: RunFilter | null;
  /**
   * Scenarios the head added (the base's suite lacks them): their episodes run after every episode
   * of the base's scenarios, so new scenarios cannot hold the workers the base's need.
   */
  added: string[];
  shard: CompareOptions['shard'];
  repeats: RepeatsPlan;
  concurrency: number;
  agents: Partial<Record<Side, AgentConfig>>;
  isolation: IsolationStatus;
  /** What the log and the report say about agent isolation, first. */
  isolationFacts: AgentIsolationFacts;
  /** The agents' network (agent.network: host from the base's stategate.yml only). */
  agentNetwork: 'own' | 'host';
  /** The baseline cache's key without the base tree and the engine (known once it starts); null: no cache. */
  baselineKey: Omit<BaselineKeyParts, 'base_tree' | 'engine'> | null;
  databases: DatabasePlan;
  /** Per side, the agent.pass_env variables this environment does not set (said at the start, and again if nothing completes). */
  unsetPassEnv: Partial<Record<Side, string[]>>;
}

/** What a run decides from the checkouts and the suites alone: no engine, no agent, no probe. */
export type SuiteDecision = Omit<
  RunPlan,
  'outDir' | 'startedAt' | 'isolation' | 'isolationFacts' | 'agentNetwork' | 'cacheDir'
>;

/**
 * Decides the run: checks out the sides (disposed with `scope`), loads each stategate.yml once,
 * resolves the policy, pins the suite and settles every count. Nothing of an agent runs here.
 */
export async function prepareRun(
  opts: CompareOptions,
  scope: ResourceScope,
  progress: (event: ProgressEvent) => void,
): Promise<RunPlan> {
  const repo = resolve(opts.repo ?? process.cwd());
  const outDir = resolve(repo, opts.out ?? '.stategate');
  const startedAt = new Date();
  const cacheDir = opts.cache ? resolve(repo, opts.cache) : null;
  mkdirSync(outDir, { recursive: true });
  // Made before any agent starts: only a folder that exists is hidden from the agents.
  if (cacheDir) mkdirSync(cacheDir, { recursive: true });
  const decided = await decideSuite(opts, [outDir, ...(cacheDir ? [cacheDir] : [])], scope, progress);
  const { agents, checkouts, configName } = decided;
  const { isolation, isolationPlan } = await isolationOf(opts, checkouts, agents, configName, progress);
  return {
    ...decided,
    outDir,
    cacheDir,
    startedAt,
    isolation,
    isolationFacts: isolationPlan.facts,
    agentNetwork: isolationPlan.network,
    baselineKey: cacheDir ? decided.baselineKey : null,
  };
}

/**
 * The part of the plan that needs only the sides' files (`stategate plan` stops here): checkouts,
 * policy, pin, scenarios, repeats, agents and the baseline key (whenever there is a base). `ignore`
 * are the run's own folders, no uncommitted change of a side.
 */
export async function decideSuite(
  opts: CompareOptions,
  ignore: string[],
  scope: ResourceScope,
  progress: (event: ProgressEvent) => void,
): Promise<SuiteDecision> {
  const repo = resolve(opts.repo ?? process.cwd());
  const configName = opts.config ?? 'stategate.yml';
  const sides: Side[] = opts.base === null ? ['head'] : ['base', 'head'];
  const files = new SuiteFiles();
  const checkouts = await checkOut(opts, sides, repo, ignore, scope, progress);

  const policy = await loadPolicy(opts, checkouts, configName, files, progress);
  const suite = policy.suite;
  const pin = pinSuite(suite);
  const repeats = repeatsPlan(suite, opts.repeats);
  const concurrency = opts.concurrency ?? suite.config.concurrency;
  const selected = filterScenarios(suite.scenarios, opts.filter);
  const scenarios = sliceScenarios(selected, opts.shard);
  const filter = filterFacts(opts.filter, selected.length, suite.scenarios.length, progress);
  const agents = await sideAgents(sides, checkouts, configName, suite, files, opts.isolation);
  const unset = unsetVariables(agents, progress);

  return {
    repo,
    configName,
    sides,
    headOnly: opts.base === null,
    checkouts,
    policy,
    suite,
    pin,
    scenarios,
    filter,
    added: (policy.changes ?? []).filter((c) => c.kind === 'scenario-added').map((c) => c.subject),
    shard: opts.shard ?? null,
    repeats,
    concurrency,
    agents,
    baselineKey: checkouts.base
      ? baselineKeyOf(suite, pin, scenarios, repeats, agents.base!, configName, opts.shard)
      : null,
    databases: databasePlan(scenarios, sides.length * repeats.max, concurrency),
    unsetPassEnv: unset,
  };
}

/** Whose policy and suite apply: the suite from `suiteFrom`'s checkout, the policy by `policyFrom`. */
async function loadPolicy(
  opts: CompareOptions,
  checkouts: RunPlan['checkouts'],
  configName: string,
  files: SuiteFiles,
  progress: (event: ProgressEvent) => void,
): Promise<RunPlan['policy']> {
  const suiteSide: Side = opts.suiteFrom === 'base' && checkouts.base ? 'base' : 'head';
  const suiteCheckout = checkouts[suiteSide]!;
  progress({
    type: 'phase',
    phase: 'load',
    message: `Loading the suite from ${suiteSide} (${suiteCheckout.ref})`,
  });
  const policy = await resolvePolicy({
    policyFrom: opts.policyFrom ?? 'base',
    pinned: await files.pinned(join(suiteCheckout.dir, configName)),
    pinnedSide: suiteSide,
    base: checkouts.base,
    configName,
    files,
  });
  if (policy.warning) progress({ type: 'log', level: 'warn', message: policy.warning });
  progress({ type: 'log', level: 'info', message: `gate policy: ${policyWords(policy.source)}` });
  return policy;
}

/** What can isolate the agents here, and which isolation each side gets (the base decides `none` and `network: host`). */
async function isolationOf(
  opts: CompareOptions,
  checkouts: RunPlan['checkouts'],
  agents: RunPlan['agents'],
  configName: string,
  progress: (event: ProgressEvent) => void,
) {
  const isolation = await probeIsolation('unshare', opts.bwrap ?? 'bwrap', sudoMode(opts.sudo, process.env));
  const trustedBase = trustedBaseAgent(checkouts, agents, configName);
  for (const message of ignoredHeadSettings(agents, trustedBase, opts.isolation))
    progress({ type: 'log', level: 'warn', message });
  const isolationPlan = planIsolation({
    status: isolation,
    agents,
    base: trustedBase,
    override: opts.isolation,
  });
  return { isolation, isolationPlan };
}

/** The filter as the report states it, said once in the log; null without one. */
function filterFacts(
  filter: CompareOptions['filter'],
  selected: number,
  total: number,
  progress: (event: ProgressEvent) => void,
): RunFilter | null {
  if (!filter || (filter.scenarios.length === 0 && filter.tags.length === 0)) return null;
  progress({
    type: 'log',
    level: 'warn',
    message: `filtered run (${filterWords(filter)}): ${selected} of the suite's ${total} scenarios; its verdict is WARN at best`,
  });
  return { scenarios: [...filter.scenarios], tags: [...filter.tags], selected, total };
}

/** The pass_env variables each side's agent will not get, each said as a warning before anything runs. */
function unsetVariables(
  agents: Partial<Record<Side, AgentConfig>>,
  progress: (event: ProgressEvent) => void,
): Partial<Record<Side, string[]>> {
  const unset: Partial<Record<Side, string[]>> = {};
  for (const [side, agent] of Object.entries(agents) as [Side, AgentConfig][]) {
    const names = unsetPassEnv(agent.pass_env, process.env);
    if (names.length === 0) continue;
    unset[side] = names;
    progress({
      type: 'log',
      level: 'warn',
      message: `${side}: ${unsetPassEnvSentence(agent.pass_env, process.env)}`,
    });
  }
  return unset;
}

/** The baseline cache's key of this run, but the base tree and the engine. */
function baselineKeyOf(
  suite: Suite,
  pin: PinnedSuite,
  scenarios: Scenario[],
  repeats: RepeatsPlan,
  baseAgent: AgentConfig,
  configName: string,
  shard: CompareOptions['shard'],
): NonNullable<RunPlan['baselineKey']> {
  return {
    suite_hash: pin.suiteHash,
    template_hash: pin.templateHash,
    seeds: seedsHash(
      pin.suiteHash,
      scenarios.map((s) => s.id),
      repeats.min,
    ),
    repeats: repeats.sequential ? { min: repeats.min, max: repeats.max } : repeats.min,
    stategate: VERSION,
    config: configName,
    isolation: baseAgent.isolation,
    // Hashed: the entry file lists its key's parts, and the section is not the file's to show.
    judge: suite.config.judge ? contentHash(suite.config.judge) : null,
    shard: shard && shard.total > 1 ? shard : null,
  };
}

/** The databases to reserve, for `episodesPerScenario` (sides x most repeats) episodes of each scenario. */
function databasePlan(scenarios: Scenario[], episodesPerScenario: number, concurrency: number): DatabasePlan {
  const perEpisode = scenarios.some((s) => s.faults.some((f) => f.fault === 'stale_response')) ? 2 : 1;
  const mostEpisodes = scenarios.length * episodesPerScenario;
  return {
    perEpisode,
    // Episodes of one wave finish together, and each waits for a database while its own is put back.
    reserve: Math.min(2 * concurrency, mostEpisodes) * perEpisode,
    mostTakes: mostEpisodes * perEpisode,
  };
}

/** Resolves each side's checkout and says what is unusual about it. */
async function checkOut(
  opts: CompareOptions,
  sides: Side[],
  repo: string,
  ignore: string[],
  scope: ResourceScope,
  progress: (event: ProgressEvent) => void,
): Promise<Partial<Record<Side, Checkout>>> {
  progress({ type: 'phase', phase: 'checkout', message: 'Checking out the sides' });
  const checkouts: Partial<Record<Side, Checkout>> = {};
  for (const side of sides) {
    const spec = side === 'head' ? opts.head : (opts.base as string);
    // The run's own output (and its cache) is no uncommitted change of the side it runs.
    const checkout = await resolveCheckout(spec, repo, { ignore });
    scope.defer(() => checkout.dispose());
    checkouts[side] = checkout;
    for (const message of checkout.warnings ?? [])
      progress({ type: 'log', level: 'warn', message: `${side}: ${message}` });
    if (checkout.dirty)
      progress({ type: 'log', level: 'warn', message: `${side}: ${checkoutLabel(checkout)}` });
  }
  if (sameFiles(checkouts.base, checkouts.head)) {
    progress({
      type: 'log',
      level: 'warn',
      message: 'base and head are the same files: the comparison cannot show what a change does',
    });
  }
  return checkouts;
}

/** Each side's agent section, with --isolation applied; a head cannot leave the container its base runs in. */
async function sideAgents(
  sides: Side[],
  checkouts: Partial<Record<Side, Checkout>>,
  configName: string,
  suite: Suite,
  files: SuiteFiles,
  isolation: CompareOptions['isolation'],
): Promise<Partial<Record<Side, AgentConfig>>> {
  const agents: Partial<Record<Side, AgentConfig>> = {};
  let mode = isolation;
  // Base first: its container decides the head's.
  for (const side of sides) {
    const configFile = join(checkouts[side]!.dir, configName);
    const agent = withIsolation(await files.agentOf(configFile, suite, side), mode, configFile);
    if (side === 'base' && agent.isolation === 'container') mode ??= 'container';
    agents[side] = agent;
  }
  // Two sides on one literal port would share one server: the head could run as the base.
  const sharedPort = sharedPortProblem(agents);
  if (sharedPort) throw new Error(sharedPort);
  return agents;
}

/** --repeats fixes the count; otherwise the config's `repeats` (a number, or {min, max} for the sequential test). */
function repeatsPlan(suite: Suite, fixed: number | undefined): RepeatsPlan {
  const r = suite.config.repeats;
  if (fixed !== undefined) return { min: fixed, max: fixed, sequential: null };
  const sequential = adaptivePolicy(r);
  const min = typeof r === 'number' ? r : r.min;
  return sequential ? { min, max: sequential.max, sequential } : { min, max: min, sequential: null };
}
