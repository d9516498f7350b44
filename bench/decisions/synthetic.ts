// A synthetic agent for the decision benchmark: each episode fails the critical expectation with
// a probability set per side, drawn from the episode's seed, so a run is reproducible.
import type { Scenario } from '../../src/config/schema.js';
import type { GradedEpisode, Side } from '../../src/model/episode.js';
import type { PlannedEpisode } from '../../src/plan/expand.js';

/** The failure probability of the critical expectation, per side. */
export type FailureRates = Record<Side, number>;

/** mulberry32: a small, fast, seeded generator in [0, 1). */
function uniform(seed: number): number {
  let t = (seed + 0x6d2b79f5) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/** A scenario with one critical expectation, `refunded_once`. */
export function syntheticScenario(id: string): Scenario {
  return {
    id,
    description: '',
    tags: [],
    state: { rows: {} },
    input: { message: 'Refund ORD-1001 please', context: {} },
    faults: [],
    expect: [
      {
        id: 'refunded_once',
        critical: true,
        query: "SELECT refund_count FROM orders WHERE id = 'ORD-1001'",
        equals: 1,
      },
    ] as Scenario['expect'],
    file: `scenarios/${id}.yaml`,
  };
}

/** One graded episode of the synthetic agent: fails with the side's rate, drawn from seed and side. */
export function syntheticEpisode(p: PlannedEpisode, rates: FailureRates, salt: number): GradedEpisode {
  const draw = uniform(
    (p.seed ^ Math.imul(salt + 1, 0x9e3779b1) ^ (p.side === 'head' ? 0x5bd1e995 : 0)) >>> 0,
  );
  const failed = draw < rates[p.side];
  return {
    record: {
      episode: p.id,
      scenario: p.scenario.id,
      side: p.side,
      repeat: p.repeat,
      seed: p.seed,
      calls: [],
      refused: [],
      agent: {
        exitCode: 0,
        signal: null,
        timedOut: false,
        durationMs: 1,
        stdout: '',
        stderr: '',
        truncated: false,
        result: { reply: 'Done.', outcome: 'SUCCESS' },
      },
      diff: { tables: {}, fingerprints: {} },
      queries: {},
      timings: {},
    },
    results: [
      { id: 'completed', kind: 'completed', critical: true, verdict: 'pass', message: 'completed' },
      {
        id: 'refunded_once',
        kind: 'query',
        critical: true,
        verdict: failed ? 'fail' : 'pass',
        message: failed ? 'refund_count is 2, expected 1' : 'refund_count is 1',
        ...(failed ? { label: 'STATE_MISMATCH' as const } : {}),
      },
    ],
    passed: !failed,
  };
}
