// The sequential test behind adaptive repeats: after each look (a batch of repeats on both sides),
// decide per expectation whether the head fails it more often than the base, or stop trying.
// The test at each look is Barnard's one-sided exact unconditional test at a fixed nominal level
// (a Pocock-style boundary); docs/statistics.md gives the looks and the measured error rates.
import { barnardHeadWorse } from './barnard.js';

/** How many repeats a case may take, and the nominal level of the test at each look. */
export interface SequentialPolicy {
  min: number;
  max: number;
  /** One-sided level of each look (default LOOK_ALPHA). */
  alpha?: number;
}

/** The nominal level of each look: with the looks of nextLook, the false BLOCK rate stays under 5%. */
export const LOOK_ALPHA = 0.02;

/** Failures of one expectation on one side, out of the repeats that graded it. */
export interface FailureCount {
  fails: number;
  runs: number;
}

/**
 * worse: the test says the head fails more often; not-worse: the head never fails, or the base
 * fails at least as often and at least twice; undecided: max reached without a decision; continue: spend another look.
 */
export type Decision = 'worse' | 'not-worse' | 'undecided' | 'continue';

export interface ExpectationDecision {
  decision: Decision;
  /** Barnard's one-sided p-value; null when the head never failed. */
  p: number | null;
}

function checkPolicy(policy: SequentialPolicy): void {
  const { min, max, alpha = LOOK_ALPHA } = policy;
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1 || max < min) {
    throw new RangeError(`repeats needs integers 1 <= min <= max; got min ${min}, max ${max}`);
  }
  if (!(alpha > 0 && alpha < 1))
    throw new RangeError(`the sequential test needs 0 < alpha < 1; got ${alpha}`);
}

/** Decides one expectation at a look from its failure counts on both sides. */
export function decideExpectation(
  base: FailureCount,
  head: FailureCount,
  policy: SequentialPolicy,
): ExpectationDecision {
  checkPolicy(policy);
  if (head.fails === 0) return { decision: 'not-worse', p: null };
  // The base never graded it (evaluation errors): more repeats have nothing to compare against.
  if (base.runs === 0) return { decision: 'undecided', p: null };
  const p = barnardHeadWorse(head.fails, head.runs, base.fails, base.runs);
  if (p <= (policy.alpha ?? LOOK_ALPHA)) return { decision: 'worse', p };
  const looked = Math.min(base.runs, head.runs);
  if (looked < policy.min) return { decision: 'continue', p };
  // The base fails it at least as often, and more than once: a pre-existing failure, which more
  // repeats cannot make the head look worse on average. One base failure against one head failure
  // is not enough to say so: a 5% -> 40% regression shows exactly that at the first look often
  // enough to cost the detection target, so such a case gets another look.
  if (base.fails >= 2 && base.fails / base.runs >= head.fails / head.runs)
    return { decision: 'not-worse', p };
  if (looked >= policy.max) return { decision: 'undecided', p };
  return { decision: 'continue', p };
}

/** The repeat count of the next look after `n`: about half again, at least two more, at most max. */
export function nextLook(n: number, policy: SequentialPolicy): number {
  checkPolicy(policy);
  if (n < policy.min) return policy.min;
  return Math.min(policy.max, n + Math.max(2, Math.ceil(n / 2)));
}
