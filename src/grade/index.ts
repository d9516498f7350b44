// Grading (docs/formats/scenario.md and docs/statistics.md): pure functions from an episode record to
// expectation results. Each kind grades itself (expectations/kinds/); this stage grades an episode.
export { isSuccess, retriesOf } from '../expectations/call-log.js';
export type { JudgeResult } from '../expectations/kind.js';
export { hasTopLevelOrderBy } from '../expectations/query-check.js';
export {
  type Comparator,
  compareValues,
  formatValue,
  GradeError,
  sameValue,
} from '../expectations/values.js';
export { COMPLETED, gradeEpisode, regradeEpisode } from './episode.js';
export { FAILURE_SIGNATURES, type FailureSignature, failureSignature } from './signature.js';
