// The sequential test on fixed sequences: Barnard's p-values, decisions per look, and the looks.
import { describe, expect, it } from 'vitest';
import { summarizeSide } from '../../src/compare/summary.js';
import { barnardHeadWorse, equalRunsTable, pooledZ } from '../../src/stats/barnard.js';
import { decideCase } from '../../src/stats/case-decision.js';
import { decideExpectation, LOOK_ALPHA, nextLook } from '../../src/stats/sequential.js';
import { passing, repeats, scenario } from '../compare/builders.js';

const policy = { min: 3, max: 20 };

describe("Barnard's one-sided test", () => {
  it('gives the exact tail of the most extreme table: 3 of 3 against 0 of 3 is 1/64', () => {
    // Only the table (3, 0) is as extreme; its chance p^3 (1-p)^3 peaks at p = 1/2.
    expect(barnardHeadWorse(3, 3, 0, 3)).toBeCloseTo(1 / 64, 6);
  });

  it('is more powerful than Fisher where it matters: 4 of 20 against 0 of 20 is under 0.02', () => {
    const p = barnardHeadWorse(4, 20, 0, 20);
    expect(p).toBeLessThan(0.02);
    // Fisher's one-sided p for the same table is C(20,4)/C(40,4) = 0.053.
    expect(p).toBeGreaterThan(0.01);
  });

  it('finds no evidence when the base fails as often', () => {
    expect(barnardHeadWorse(2, 20, 2, 20)).toBeGreaterThan(0.5);
    expect(barnardHeadWorse(10, 20, 2, 20)).toBeLessThan(0.01);
  });

  it('grows with less evidence: fewer head failures never give a smaller p', () => {
    for (let h = 1; h < 20; h++) {
      expect(barnardHeadWorse(h, 20, 1, 20)).toBeGreaterThanOrEqual(barnardHeadWorse(h + 1, 20, 1, 20));
    }
  });

  it('gives every equal-runs table at once the p-values it gives one at a time', () => {
    for (const n of [1, 7, 12]) {
      const table = equalRunsTable(n);
      for (let h = 0; h <= n; h++) {
        for (let b = 0; b <= n; b++) {
          expect(table[h * (n + 1) + b]).toBeCloseTo(barnardHeadWorse(h, n, b, n), 12);
        }
      }
    }
  });

  it('has a zero statistic when every repeat failed or none did', () => {
    expect(pooledZ(0, 5, 0, 5)).toBe(0);
    expect(pooledZ(5, 5, 5, 5)).toBe(0);
  });

  it('refuses counts that are not counts', () => {
    expect(() => barnardHeadWorse(4, 3, 0, 3)).toThrow(/0 <= fails <= runs .* on the head; got 4 of 3/);
    expect(() => barnardHeadWorse(1, 3, 0, 0)).toThrow(/on the base; got 0 of 0/);
  });
});

describe('decideExpectation', () => {
  const d = (bf: number, bn: number, hf: number, hn: number) =>
    decideExpectation({ fails: bf, runs: bn }, { fails: hf, runs: hn }, policy).decision;

  it('calls a head that fails every repeat of a clean base worse at the first look', () => {
    expect(d(0, 3, 3, 3)).toBe('worse');
  });

  it('asks for another look after one head failure against a clean base', () => {
    expect(d(0, 3, 1, 3)).toBe('continue');
    expect(d(0, 5, 2, 5)).toBe('continue');
  });

  it('stops when the base fails it at least as often and at least twice (pre-existing)', () => {
    expect(d(2, 3, 2, 3)).toBe('not-worse');
    expect(d(3, 8, 2, 8)).toBe('not-worse');
    expect(d(2, 5, 1, 10)).toBe('not-worse');
  });

  it('gives one base failure against one head failure another look: a 5% -> 40% regression looks like that', () => {
    expect(d(1, 3, 1, 3)).toBe('continue');
    expect(d(1, 8, 1, 8)).toBe('continue');
    // Two base failures to the head's three at max are still no decision.
    expect(d(2, 20, 3, 20)).toBe('undecided');
  });

  it('is undecided at max when the evidence stays thin', () => {
    expect(d(0, 20, 2, 20)).toBe('undecided');
  });

  it('is undecided when the base never graded the expectation', () => {
    expect(d(0, 0, 2, 3)).toBe('undecided');
  });

  it('has nothing to decide when the head never failed', () => {
    expect(decideExpectation({ fails: 2, runs: 3 }, { fails: 0, runs: 3 }, policy)).toEqual({
      decision: 'not-worse',
      p: null,
    });
  });

  it('uses the level it is given', () => {
    expect(LOOK_ALPHA).toBe(0.02);
    // p = 0.043: worse at 0.05, not at the default 0.02.
    expect(
      decideExpectation({ fails: 0, runs: 20 }, { fails: 3, runs: 20 }, { ...policy, alpha: 0.05 }).decision,
    ).toBe('worse');
    expect(d(0, 20, 3, 20)).toBe('undecided');
  });

  it('refuses a policy that cannot be run', () => {
    expect(() => decideExpectation({ fails: 0, runs: 3 }, { fails: 1, runs: 3 }, { min: 5, max: 3 })).toThrow(
      /1 <= min <= max; got min 5, max 3/,
    );
    expect(() => nextLook(3, { min: 3, max: 20, alpha: 2 })).toThrow(/0 < alpha < 1; got 2/);
  });
});

describe('nextLook', () => {
  it('grows by about half, at least two, and ends at max', () => {
    const looks = [nextLook(0, policy)];
    while (looks[looks.length - 1] < policy.max) looks.push(nextLook(looks[looks.length - 1], policy));
    expect(looks).toEqual([3, 5, 8, 12, 18, 20]);
  });
});

describe('decideCase', () => {
  const s = scenario('refund', [{ id: 'refunded_once', critical: true }]);
  const fails = (n: number, failing: number[]) =>
    Array.from({ length: n }, (_, i) =>
      failing.includes(i) ? { verdicts: { refunded_once: 'fail' as const } } : {},
    );

  it('stops a case whose sides agree at min, saying so', () => {
    const d = decideCase(
      summarizeSide(s, passing(s, 'base', 3)),
      summarizeSide(s, passing(s, 'head', 3)),
      policy,
    );
    expect(d.more).toBe(false);
    expect(d.reason).toBe('Stopped at min: the head never failed an expectation (base 3, head 3 repeats).');
  });

  it('goes on while a head failure of a clean base is undecided', () => {
    const d = decideCase(
      summarizeSide(s, passing(s, 'base', 3)),
      summarizeSide(s, repeats(s, 'head', fails(3, [1]))),
      policy,
    );
    expect(d.more).toBe(true);
    expect(d.reason).toBe('The test has not decided refunded_once yet (base 3, head 3 repeats).');
  });

  it('names the decision and its p-value when it stops', () => {
    const d = decideCase(
      summarizeSide(s, passing(s, 'base', 5)),
      summarizeSide(s, repeats(s, 'head', fails(5, [0, 1, 2, 3]))),
      policy,
    );
    expect(d.more).toBe(false);
    expect(d.expectations.refunded_once.decision).toBe('worse');
    expect(d.reason).toMatch(
      /^Stopped by the sequential test \(refunded_once: head worse, p=0\.0\d\d; base 5, head 5 repeats\)\.$/,
    );
  });
});
