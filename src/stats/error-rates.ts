// How often a repeats setting gives a wrong verdict, computed exactly for one critical expectation
// whose repeats fail independently at a fixed rate per side: the false BLOCK rate of an unchanged
// agent and the detection rate of a regression, for fixed N (binomial) and for adaptive repeats (by
// summing over every path of failure counts through the looks, with the real sequential test).
import { fillEqualRuns } from './barnard.js';
import { decideExpectation, nextLook, type SequentialPolicy } from './sequential.js';

/** The unchanged agents the rates are stated for: failing 0%, 5% and 20% of runs on both sides. */
export const UNCHANGED_RATES = [0, 0.05, 0.2] as const;
/** The regressions the rates are stated for: base -> head failure rates. */
export const REGRESSIONS = [
  { base: 0, head: 0.3 },
  { base: 0.05, head: 0.4 },
] as const;

/** The targets every default meets: false BLOCK at most this on the unchanged agents... */
export const FALSE_BLOCK_TARGET = 0.05;
/** ...and detection at least this on the regressions. */
export const DETECTION_TARGET = 0.9;

/** Adaptive policies whose looks go past this are not computed (the sum grows with max squared). */
export const EXACT_MAX = 60;

export interface RepeatsOutcome {
  /** The chance the case is classified new-critical-failure. */
  block: number;
  /** Mean episodes per case, both sides. */
  episodes: number;
}

function binomialPmf(n: number, p: number): number[] {
  const out: number[] = [];
  let c = 1;
  for (let k = 0; k <= n; k++) {
    out.push(c * p ** k * (1 - p) ** (n - k));
    c = (c * (n - k)) / (k + 1);
  }
  return out;
}

/**
 * Fixed N: a case BLOCKs when the head fails the critical expectation at least once and the base
 * passes it in all N repeats.
 */
export function fixedOutcome(n: number, base: number, head: number): RepeatsOutcome {
  return { block: (1 - (1 - head) ** n) * (1 - base) ** n, episodes: 2 * n };
}

/** Adaptive repeats: the exact BLOCK chance and mean episodes, through decideExpectation at every look. */
export function adaptiveOutcome(policy: SequentialPolicy, base: number, head: number): RepeatsOutcome {
  if (policy.max > EXACT_MAX) throw new RangeError(`exact rates need max <= ${EXACT_MAX}; got ${policy.max}`);
  // Probability mass of the cases still going, by [base failures, head failures], after `done` repeats.
  let going = new Map<number, number>([[0, 1]]);
  const key = (b: number, h: number) => b * 1000 + h;
  let done = 0;
  let block = 0;
  let episodes = 0;
  while (going.size > 0) {
    const target = nextLook(done, policy);
    const step = target - done;
    const pb = binomialPmf(step, base);
    const ph = binomialPmf(step, head);
    const next = new Map<number, number>();
    for (const [k, mass] of going) {
      episodes += 2 * step * mass;
      const b0 = Math.floor(k / 1000);
      const h0 = k % 1000;
      for (let i = 0; i <= step; i++) {
        for (let j = 0; j <= step; j++) {
          const at = key(b0 + i, h0 + j);
          next.set(at, (next.get(at) ?? 0) + mass * pb[i] * ph[j]);
        }
      }
    }
    done = target;
    fillEqualRuns(done);
    going = new Map();
    for (const [k, mass] of next) {
      const b = Math.floor(k / 1000);
      const h = k % 1000;
      const d = decideExpectation({ fails: b, runs: done }, { fails: h, runs: done }, policy).decision;
      if (d === 'worse') block += mass;
      else if (d === 'continue' && done < policy.max) going.set(k, mass);
    }
  }
  return { block, episodes };
}

export interface ErrorRates {
  /** False BLOCK rate per unchanged agent (its failure rate on both sides). */
  false_block: { fails: number; rate: number }[];
  /** Detection rate per regression. */
  detection: { base: number; head: number; rate: number }[];
}

/** The outcome of a repeats setting (a fixed N, or min..max) on one agent; null when not computable. */
export function outcomeOf(
  repeats: number | SequentialPolicy,
  base: number,
  head: number,
): RepeatsOutcome | null {
  if (typeof repeats === 'number') return fixedOutcome(repeats, base, head);
  if (repeats.min >= repeats.max) return fixedOutcome(repeats.min, base, head);
  if (repeats.max > EXACT_MAX) return null;
  return adaptiveOutcome(repeats, base, head);
}

/** The error rates of a repeats setting on the stated agents; null when not computable. */
export function errorRates(repeats: number | SequentialPolicy): ErrorRates | null {
  const out: ErrorRates = { false_block: [], detection: [] };
  for (const fails of UNCHANGED_RATES) {
    const o = outcomeOf(repeats, fails, fails);
    if (!o) return null;
    out.false_block.push({ fails, rate: o.block });
  }
  for (const r of REGRESSIONS) {
    const o = outcomeOf(repeats, r.base, r.head);
    if (!o) return null;
    out.detection.push({ ...r, rate: o.block });
  }
  return out;
}

/** Whether the rates meet the targets: false BLOCK <= 5% on every unchanged agent, detection >= 90%. */
export function meetsTargets(rates: ErrorRates): boolean {
  return (
    rates.false_block.every((f) => f.rate <= FALSE_BLOCK_TARGET) &&
    rates.detection.every((d) => d.rate >= DETECTION_TARGET)
  );
}
