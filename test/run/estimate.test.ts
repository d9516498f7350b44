// The estimate's arithmetic on plain values: counts per side, spend only from measured costs, and
// what fits a budget; checked against hand-computed numbers.
import { describe, expect, it } from 'vitest';
import { estimateRun } from '../../src/run/estimate.js';

const adaptive = { min: 7, max: 32, sequential: { min: 7, max: 32 } };

describe('estimateRun', () => {
  it('prices every side at the measured cost per scenario and floors what fits the budget', () => {
    const e = estimateRun({
      sides: ['base', 'head'],
      scenarioIds: ['a', 'b'],
      repeats: adaptive,
      runBudgetUsd: 10,
      cache: {
        file: 'f',
        storedAt: '2026-12-01T00:00:00.000Z',
        engine: 'embedded',
        costs: new Map([
          ['a', { episodes: 7, usdPerEpisode: 0.1 }],
          ['b', { episodes: 7, usdPerEpisode: 0.3 }],
        ]),
      },
    });
    expect(e.episodes.total).toEqual({ min: 28, max: 128, never_failing: 28 });
    // (0.1 + 0.3) x 7 x 2 = 5.6; x 32 x 2 = 25.6; the mean episode is 0.2, and 10 / 0.2 = 50.
    expect(e.cost_usd).toEqual({ min: 5.6, max: 25.6, never_failing: 5.6 });
    expect(e.usd_per_episode).toBe(0.2);
    expect(e.budget).toEqual({ run_usd: 10, episodes_fit: 50 });
  });

  it('says unknown when one scenario is not measured, and fits nothing at a cost of 0', () => {
    const partial = estimateRun({
      sides: ['head'],
      scenarioIds: ['a', 'b'],
      repeats: { min: 3, max: 3, sequential: null },
      runBudgetUsd: 5,
      cache: {
        file: 'f',
        storedAt: '2026-12-01T00:00:00.000Z',
        engine: 'embedded',
        costs: new Map([['a', { episodes: 3, usdPerEpisode: 0.1 }]]),
      },
    });
    expect(partial.episodes.per_side).toEqual({ min: 6, max: 6, never_failing: 6 });
    expect(partial.cost_usd.min).toBeNull();
    expect(partial.budget.episodes_fit).toBeNull();
    const free = estimateRun({
      sides: ['head'],
      scenarioIds: ['a'],
      repeats: { min: 3, max: 3, sequential: null },
      runBudgetUsd: 5,
      cache: {
        file: 'f',
        storedAt: '2026-12-01T00:00:00.000Z',
        engine: 'embedded',
        costs: new Map([['a', { episodes: 3, usdPerEpisode: 0 }]]),
      },
    });
    expect(free.cost_usd.min).toBe(0);
    expect(free.budget.episodes_fit).toBeNull();
  });
});
