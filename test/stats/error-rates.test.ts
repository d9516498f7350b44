// The exact error rates of repeat policies: the numbers the report prints and bench/decisions checks.
import { describe, expect, it } from 'vitest';
import { DEFAULT_REPEATS, StategateConfig } from '../../src/config/schema.js';
import {
  adaptiveOutcome,
  errorRates,
  fixedOutcome,
  meetsTargets,
  outcomeOf,
} from '../../src/stats/error-rates.js';

describe('fixed N', () => {
  it("blocks an unchanged agent failing 5% of runs 17.5% of the time at N=5 (the issue's 16.8% measured)", () => {
    expect(fixedOutcome(5, 0.05, 0.05).block).toBeCloseTo(0.175, 3);
    expect(fixedOutcome(5, 0.2, 0.2).block).toBeCloseTo(0.2203, 4);
    // N=3 detects a 0% -> 30% regression about two times in three.
    expect(fixedOutcome(3, 0, 0.3).block).toBeCloseTo(0.657, 3);
  });

  it('misses the targets at every N from 1 to 40', () => {
    for (let n = 1; n <= 40; n++) expect(meetsTargets(errorRates(n)!)).toBe(false);
  });
});

describe('the default repeats', () => {
  it('is what a stategate.yml without repeats runs', () => {
    const parsed = StategateConfig.parse({ version: 1, agent: { command: 'node a.mjs' } });
    expect(parsed.repeats).toEqual({ min: DEFAULT_REPEATS.min, max: DEFAULT_REPEATS.max });
    expect(DEFAULT_REPEATS.min).toBeLessThan(DEFAULT_REPEATS.max);
  });

  it('meets every target exactly: false BLOCK <= 5%, detection >= 90%, fewer episodes than fixed N=20', () => {
    const rates = errorRates({ ...DEFAULT_REPEATS })!;
    expect(meetsTargets(rates)).toBe(true);
    expect(rates.false_block.map((f) => f.fails)).toEqual([0, 0.05, 0.2]);
    for (const f of rates.false_block) expect(f.rate).toBeLessThanOrEqual(0.05);
    for (const d of rates.detection) expect(d.rate).toBeGreaterThanOrEqual(0.9);
    for (const [base, head] of [
      [0, 0],
      [0.05, 0.05],
      [0.2, 0.2],
      [0, 0.1],
      [0, 0.3],
      [0.05, 0.4],
    ]) {
      expect(outcomeOf({ ...DEFAULT_REPEATS }, base, head)!.episodes).toBeLessThan(40);
    }
  });

  it('keeps false BLOCKs at or under 5% for an unchanged agent failing at any rate, not only the three stated', () => {
    for (let p = 0.05; p < 1; p += 0.05) {
      expect(adaptiveOutcome({ ...DEFAULT_REPEATS }, p, p).block).toBeLessThanOrEqual(0.05);
    }
  });

  it('stops at min when both sides fail every repeat: a pre-existing failure costs no extra looks', () => {
    expect(adaptiveOutcome({ ...DEFAULT_REPEATS }, 1, 1)).toEqual({
      block: 0,
      episodes: 2 * DEFAULT_REPEATS.min,
    });
  });

  it('a range one lower at either end misses a target with room for sampling error, so 7..32 is the cheapest', () => {
    // 6..32: a head failing 30% passes its first 6 repeats 12% of the time, so detection < 90%.
    expect(adaptiveOutcome({ min: 6, max: 32 }, 0, 0.3).block).toBeLessThan(0.9);
    expect(adaptiveOutcome({ min: 7, max: 31 }, 0, 0.3).block).toBeLessThan(0.91);
  });
});
