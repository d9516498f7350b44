// What one evaluator returns: an ExpectationResult without the expectation's own id, kind and
// criticality, which the episode grader adds.
import type { ExpectationResult, FailureLabel } from '../model/episode.js';

/** The verdict, label, sentence and evidence of one expectation on one episode. */
export type Grade = Omit<ExpectationResult, 'id' | 'kind' | 'critical'>;

/** A passing grade with the sentence that says why. */
export function passed(message: string, expected?: unknown, actual?: unknown): Grade {
  return withEvidence({ verdict: 'pass', message }, expected, actual);
}

/** A failing grade: the label names the failure, the sentence gives the expected and the actual value. */
export function failed(label: FailureLabel, message: string, expected?: unknown, actual?: unknown): Grade {
  return withEvidence({ verdict: 'fail', label, message }, expected, actual);
}

/** An expectation that could not be evaluated: never a pass, never the agent's fail. */
export function errored(message: string): Grade {
  return { verdict: 'error', label: 'EVALUATION_ERROR', message };
}

function withEvidence(grade: Grade, expected: unknown, actual: unknown): Grade {
  if (expected !== undefined) grade.expected = expected;
  if (actual !== undefined) grade.actual = actual;
  return grade;
}

/** `n thing` or `n things`. */
export function plural(n: number, thing: string, things = `${thing}s`): string {
  return `${n} ${n === 1 ? thing : things}`;
}
