// One deterministic name for how an episode failed, so failures group across repeats and sides.
import { inSeqOrder, isSuccess } from '../expectations/call-log.js';
import { kindNamed } from '../expectations/registry.js';
import type { FailureSignature } from '../model/classes.js';
import type { CallRecord, GradedEpisode } from '../model/episode.js';
import { COMPLETED } from './episode.js';

export { FAILURE_SIGNATURES, type FailureSignature } from '../model/classes.js';

/** The first call that got an error (non-2xx, or a dropped connection) and was never followed by a success of its tool. */
export function unrecoveredError(calls: CallRecord[]): CallRecord | undefined {
  const ordered = inSeqOrder(calls);
  return ordered.find(
    (c) =>
      !isSuccess(c.status) &&
      !ordered.some((later) => later.seq > c.seq && later.tool === c.tool && isSuccess(later.status)),
  );
}

/**
 * The signature of a failed episode, first match wins in FAILURE_SIGNATURES order; null when no
 * expectation failed (a passing episode, or one with only errors, which are not the agent's failures).
 */
export function failureSignature(graded: GradedEpisode): FailureSignature | null {
  const failures = graded.results.filter((r) => r.verdict === 'fail');
  if (failures.length === 0) return null;
  const labelled = (label: string) => failures.some((r) => r.label === label);
  const calls = graded.record.calls;
  if (failures.some((r) => r.kind === COMPLETED)) return 'agent-did-not-complete';
  if (labelled('DUPLICATE_EFFECT')) return 'duplicate-effect';
  if (labelled('HALLUCINATED_SUCCESS')) return 'success-claimed-without-effect';
  if (unrecoveredError(calls)) return 'tool-error-not-recovered';
  if (labelled('EXTRA_EFFECT')) return 'extra-effect';
  if (labelled('MISSING_EFFECT')) return 'missing-required-effect';
  const stateFailed = failures.some((r) => kindNamed(r.kind)?.evidence === 'state');
  if (stateFailed && !calls.some((c) => c.mutated)) return 'no-state-changing-action';
  if (stateFailed) return 'wrong-state-update';
  return 'other';
}
