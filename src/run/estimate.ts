// The estimate of `stategate plan`: from a run's decided suite, how many episodes a compare (or run)
// would take per side, and what they would spend on models, measured from the baseline cache's
// episodes where an entry matches and "unknown" (null) everywhere else: never a guessed price.
import type { Side } from '../model/episode.js';
import { decideCase } from '../stats/case-decision.js';
import { nextLook, type SequentialPolicy } from '../stats/sequential.js';
import type { RepeatsPlan } from './plan.js';

/** What the baseline cache measured for one scenario's base episodes. */
export interface MeasuredCost {
  episodes: number;
  /** Mean model spend per episode in USD, as recorded; null: some call had no price. */
  usdPerEpisode: number | null;
}

/** The cache entry an estimate read, when one matched. */
export interface CacheSource {
  file: string;
  /** When the run that stored it started (ISO 8601). */
  storedAt: string;
  engine: string;
  costs: Map<string, MeasuredCost>;
}

export interface EstimateInput {
  sides: Side[];
  scenarioIds: string[];
  repeats: RepeatsPlan;
  runBudgetUsd: number | null;
  cache: CacheSource | null;
}

/** Per scenario, what it would cost and from what. */
export interface ScenarioEstimate {
  id: string;
  /** USD per episode measured by the cache; null: unknown. */
  usd_per_episode: number | null;
  /** Base episodes the cache entry holds for it (0: not measured). */
  measured_episodes: number;
}

export interface RunEstimate {
  sides: Side[];
  scenarios: number;
  repeats: { min: number; max: number; adaptive: boolean; never_failing: number };
  /** Episodes per side and over all sides: the fewest, the most, and when no scenario ever fails. */
  episodes: {
    per_side: { min: number; max: number; never_failing: number };
    total: { min: number; max: number; never_failing: number };
  };
  /** USD over all sides (the head priced at the base's measured cost); null: unknown. */
  cost_usd: { min: number | null; max: number | null; never_failing: number | null };
  /** USD per episode over the suite's scenarios; null: unknown. */
  usd_per_episode: number | null;
  source: { kind: 'baseline-cache'; file: string; stored_at: string; engine: string } | { kind: 'none' };
  budget: {
    run_usd: number | null;
    /** The most episodes that fit run_usd at the measured cost; null: no budget or unknown cost. */
    episodes_fit: number | null;
  };
  per_scenario: ScenarioEstimate[];
}

/**
 * The repeats the sequential test takes for a case in which no expectation ever fails on either
 * side: its first look when that decides it, or as many looks as the test asks for.
 */
export function neverFailingRepeats(repeats: RepeatsPlan, sides: Side[]): number {
  const policy: SequentialPolicy | null = repeats.sequential;
  if (!policy) return repeats.min;
  let n = nextLook(0, policy);
  for (;;) {
    const clean = { runs: n, passes: n, expectations: {} };
    const decision = decideCase(sides.includes('base') ? clean : null, clean, policy);
    if (!decision.more || n >= policy.max) return n;
    n = nextLook(n, policy);
  }
}

/** Rounds to a millionth of a dollar, so JSON shows no float noise. */
function usd(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/** Estimates episodes and spend; a cost is a number only when every scenario was measured. */
export function estimateRun(input: EstimateInput): RunEstimate {
  const { sides, scenarioIds, repeats, cache } = input;
  const never = neverFailingRepeats(repeats, sides);
  const n = scenarioIds.length;
  const perSide = { min: n * repeats.min, max: n * repeats.max, never_failing: n * never };
  const k = sides.length;
  const perScenario: ScenarioEstimate[] = scenarioIds.map((id) => {
    const m = cache?.costs.get(id);
    return { id, usd_per_episode: m?.usdPerEpisode ?? null, measured_episodes: m?.episodes ?? 0 };
  });
  const known = perScenario.every((s) => s.usd_per_episode !== null);
  const sum = (repeatsPerSide: number) =>
    known
      ? usd(perScenario.reduce((t, s) => t + (s.usd_per_episode as number), 0) * repeatsPerSide * k)
      : null;
  const cost = { min: sum(repeats.min), max: sum(repeats.max), never_failing: sum(never) };
  const perEpisode = known && n > 0 ? usd((cost.min as number) / (k * perSide.min)) : null;
  const budget = input.runBudgetUsd;
  return {
    sides,
    scenarios: n,
    repeats: {
      min: repeats.min,
      max: repeats.max,
      adaptive: repeats.sequential !== null,
      never_failing: never,
    },
    episodes: {
      per_side: perSide,
      total: { min: k * perSide.min, max: k * perSide.max, never_failing: k * perSide.never_failing },
    },
    cost_usd: cost,
    usd_per_episode: perEpisode,
    source: cache
      ? { kind: 'baseline-cache', file: cache.file, stored_at: cache.storedAt, engine: cache.engine }
      : { kind: 'none' },
    budget: {
      run_usd: budget,
      episodes_fit:
        budget === null || perEpisode === null
          ? null
          : perEpisode === 0
            ? null
            : Math.floor(budget / perEpisode + 1e-9),
    },
    per_scenario: perScenario,
  };
}
