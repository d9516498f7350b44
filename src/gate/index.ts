// The gate: verdict policy, check conclusions and exit codes.
export {
  checkConclusion,
  DEFAULT_GATE,
  exitCodeFor,
  type FailOn,
  type GateDecision,
  type GatedCase,
  type GatePolicy,
  type GateReason,
  gateClassesOf,
  gateDecision,
  gateFails,
  type RunFacts,
} from './verdict.js';
