// Grading (docs/formats/scenario.md and docs/statistics.md): pure functions from an episode record to expectation results.
export { isSuccess, retriesOf } from './calls.js';
export type { JudgeResult } from './claims.js';
export { COMPLETED, gradeEpisode, regradeEpisode, STATE_KINDS } from './episode.js';
export { hasTopLevelOrderBy } from './query.js';
export { FAILURE_SIGNATURES, type FailureSignature, failureSignature } from './signature.js';
export {
  type Comparator,
  compareValues,
  formatValue,
  GradeError,
  sameValue,
} from './values.js';
