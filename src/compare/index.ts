// Per-case comparison (statistics, classification, lockstep divergence, state and flaky
// explanations), the one assembly of report.json from the cases (compareSuite), and the merge of
// shard reports with the same totals.

export { type CaseInput, type CaseOptions, compareCase } from './case.js';
export { type Classification, classifySummaries, isFlaky } from './classify.js';
export { firstDivergence } from './divergence.js';
export { COMPLETED, episodePassed, isGradable } from './episodes.js';
export { explainFlaky } from './flaky.js';
export { MergeError, type MergeResult, mergeReports, tryMergeReports } from './merge.js';
export { ABSENT, STATE_DIFF_CAP, type StateDifferences, stateDifferences, WHOLE_ROW } from './state-diff.js';
export { defaultKs, passAtK, passHatK, sideStats, suiteStats, wilsonInterval } from './stats.js';
export { compareSuite, type ReportFacts, type SuiteInput } from './suite.js';
export { summarizeSide } from './summary.js';
export { withTotals } from './totals.js';
export { type Step, toTrajectory } from './trajectory.js';
