import { describe, expect, it } from 'vitest';
import {
  defaultKs,
  passAtK,
  passHatK,
  sideStats,
  suiteStats,
  wilsonInterval,
} from '../../src/compare/stats.js';

describe('pass@k and pass^k', () => {
  it('match the hand-computed values for n=5, c=3', () => {
    expect(passAtK(5, 3, 1)).toBeCloseTo(0.6, 12);
    expect(passAtK(5, 3, 2)).toBeCloseTo(0.9, 12); // 1 - C(2,2)/C(5,2) = 1 - 1/10
    expect(passAtK(5, 3, 3)).toBeCloseTo(1, 12); // only 2 failures: 3 draws always include a pass
    expect(passHatK(5, 3, 1)).toBeCloseTo(0.6, 12);
    expect(passHatK(5, 3, 2)).toBeCloseTo(0.3, 12); // C(3,2)/C(5,2) = 3/10
    expect(passHatK(5, 3, 3)).toBeCloseTo(0.1, 12); // C(3,3)/C(5,3) = 1/10
    expect(passHatK(5, 3, 5)).toBe(0);
  });

  it('are 1 and 0 at the extremes and null when k exceeds n', () => {
    expect(passAtK(5, 5, 5)).toBe(1);
    expect(passHatK(5, 5, 5)).toBe(1);
    expect(passAtK(5, 0, 3)).toBe(0);
    expect(passHatK(4, 3, 5)).toBeNull();
    expect(passAtK(4, 3, 5)).toBeNull();
  });

  it('stays finite where the binomials would overflow', () => {
    const v = passHatK(1000, 990, 500);
    expect(v).not.toBeNull();
    expect(v!).toBeGreaterThan(0);
    expect(v!).toBeLessThan(0.01);
  });

  it('rejects impossible counts with a precise message', () => {
    expect(() => passAtK(5, 6, 1)).toThrow('pass@k needs integers 0 <= c <= n and k >= 1; got n=5, c=6, k=1');
    expect(() => passHatK(5, 2, 0)).toThrow('got n=5, c=2, k=0');
    expect(() => passAtK(5, 2.5, 1)).toThrow(RangeError);
  });
});

describe('wilsonInterval', () => {
  it('matches the hand-computed 95% interval for 3 of 5', () => {
    const w = wilsonInterval(5, 3)!;
    expect(w.low).toBeCloseTo(0.2307, 4);
    expect(w.high).toBeCloseTo(0.8824, 4);
  });

  it('is [0.5655, 1] for 5 of 5 and [0, 0.4345] for 0 of 5', () => {
    const all = wilsonInterval(5, 5)!;
    expect(all.low).toBeCloseTo(0.5655, 4);
    expect(all.high).toBe(1);
    const none = wilsonInterval(5, 0)!;
    expect(none.low).toBe(0);
    expect(none.high).toBeCloseTo(0.4345, 4);
  });

  it('is null without trials', () => {
    expect(wilsonInterval(0, 0)).toBeNull();
  });
});

describe('sideStats', () => {
  it('reports rate, all-N, pass@k and pass^k for k = 1 and N', () => {
    const s = sideStats({ runs: 5, passes: 3, infraErrors: 0 });
    expect(defaultKs(5)).toEqual([1, 5]);
    expect(s.n).toBe(5);
    expect(s.pass_rate).toBeCloseTo(0.6, 12);
    expect(s.all_n).toBe(false);
    expect(Object.keys(s.pass_at_k)).toEqual(['1', '5']);
    expect(s.pass_hat_k['5']).toBe(0);
    expect(s.pass_at_k['5']).toBe(1);
  });

  it('excludes repeats that could not be graded, and is then never all-N', () => {
    const s = sideStats({ runs: 5, passes: 4, infraErrors: 1 });
    expect(s.n).toBe(4);
    expect(s.pass_rate).toBe(1);
    expect(s.all_n).toBe(false);
    expect(s.pass_hat_k['5']).toBeNull();
  });

  it('passes all-N only when every repeat passed', () => {
    expect(sideStats({ runs: 3, passes: 3 }).all_n).toBe(true);
    expect(sideStats({ runs: 0, passes: 0 }).all_n).toBe(false);
    expect(sideStats({ runs: 0, passes: 0 }).pass_rate).toBeNull();
  });

  it('takes a k list', () => {
    const s = sideStats({ runs: 5, passes: 3 }, [2, 1, 2]);
    expect(s.pass_at_k).toEqual({ '1': expect.closeTo(0.6, 12), '2': expect.closeTo(0.9, 12) });
    expect(s.pass_hat_k['2']).toBeCloseTo(0.3, 12);
  });
});

describe('suiteStats', () => {
  it('averages over scenarios with graded repeats and counts the others as excluded', () => {
    const s = suiteStats([
      sideStats({ runs: 5, passes: 5 }),
      sideStats({ runs: 5, passes: 3 }),
      sideStats({ runs: 2, passes: 0, infraErrors: 2 }),
    ]);
    expect(s.scenarios).toBe(2);
    expect(s.excluded).toBe(1);
    expect(s.pass_rate).toBeCloseTo(0.8, 12);
    expect(s.all_n).toBeCloseTo(0.5, 12);
    expect(s.pass_hat_k['5']).toBeCloseTo(0.5, 12); // (1 + 0) / 2
    expect(s.pass_at_k['1']).toBeCloseTo(0.8, 12);
  });

  it('is empty for no scenarios', () => {
    expect(suiteStats([])).toEqual({
      scenarios: 0,
      excluded: 0,
      pass_rate: null,
      all_n: null,
      pass_at_k: {},
      pass_hat_k: {},
    });
  });
});
