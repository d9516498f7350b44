// The names a report classifies by: case classes, the gate's classes and failure signatures. They are
// part of report.json and stategate.yml (contracts), so every stage takes them from here.

/** How a case compares between base and head (docs/statistics.md). */
export const CASE_CLASSES = [
  'new-critical-failure',
  'regressed',
  'improved',
  'unchanged',
  'incomplete',
] as const;
export type CaseClass = (typeof CASE_CLASSES)[number];

// `suite-weakened` is a fact about the suite, not a case: the head's suite lets through what the base's caught.
/** What `gate.block` and `gate.warn` may list. */
export const GATE_CLASSES = [...CASE_CLASSES, 'flaky', 'suite-weakened'] as const;
export type GateClass = (typeof GATE_CLASSES)[number];

/** The gate of stategate.yml: which classes block and which warn. */
export interface GatePolicy {
  block: readonly string[];
  warn: readonly string[];
}

/** The gate stategate.yml has when it says nothing: the one default every stage and rendering uses. */
export const DEFAULT_GATE: { readonly block: readonly GateClass[]; readonly warn: readonly GateClass[] } = {
  block: ['new-critical-failure', 'incomplete'],
  warn: ['regressed', 'flaky'],
};

/** The failure signatures, in the order they are tried: the first that matches names the episode. */
export const FAILURE_SIGNATURES = [
  'agent-did-not-complete',
  'duplicate-effect',
  'success-claimed-without-effect',
  'tool-error-not-recovered',
  'extra-effect',
  'missing-required-effect',
  'no-state-changing-action',
  'wrong-state-update',
  'other',
] as const;
export type FailureSignature = (typeof FAILURE_SIGNATURES)[number];

/** What each signature means, in the words a report explains it with where it lists one. */
export const SIGNATURE_MEANINGS: Record<FailureSignature, string> = {
  'agent-did-not-complete': 'the agent crashed, timed out or printed no valid result',
  'duplicate-effect': 'a write applied the same effect twice',
  'success-claimed-without-effect': 'the agent claimed success that the records do not back',
  'tool-error-not-recovered': 'a tool call failed and no later call of that tool succeeded',
  'extra-effect': 'a table the scenario does not allow to change changed',
  'missing-required-effect': 'a row change the scenario expects did not happen',
  'no-state-changing-action': 'the final state is wrong and no call changed the database',
  'wrong-state-update': 'the final state is wrong after calls that changed the database',
  other:
    'a failure none of the above names (call order, call counts, retries, the claimed outcome, the reply, the judge)',
};

/** How a case without a base side begins its reason (renderings of a head-only run leave it out). */
export const NEW_SCENARIO = 'New scenario (no base run): ';
