// Per-case comparison: statistics, classification, lockstep divergence, state and flaky explanations.
export { type CaseInput, type CaseOptions, compareCase } from './case.js';
export { type Classification, classifyCase, classifySummaries, isFlaky } from './classify.js';
export { firstDivergence } from './divergence.js';
export { COMPLETED, episodePassed, isGradable } from './episodes.js';
export { explainFlaky } from './flaky.js';
export { ABSENT, STATE_DIFF_CAP, type StateDifferences, stateDifferences, WHOLE_ROW } from './state-diff.js';
export { defaultKs, passAtK, passHatK, sideStats, suiteStats, wilsonInterval } from './stats.js';
export { summarizeSide } from './summary.js';
export { renderCall, type Step, toTrajectory } from './trajectory.js';
