// One case of report.json: both sides summed up, the class, and the evidence that explains it.
import type { IgnoreColumns, Scenario } from '../config/schema.js';
import type { GradedEpisode } from '../model/episode.js';
import type { CaseReport } from '../model/report.js';
import { type CaseDecision, decideCase } from '../stats/case-decision.js';
import type { SequentialPolicy } from '../stats/sequential.js';
import { classifySummaries, ungradableNotes } from './classify.js';
import { firstConversationDivergence } from './conversation-divergence.js';
import { firstDivergence } from './divergence.js';
import { episodePassed, inRepeatOrder, isGradable } from './episodes.js';
import { agentStderr, episodeSteps } from './evidence.js';
import { explainFlaky } from './flaky.js';
import { mergeIgnoreColumns, STATE_DIFF_CAP, stateDifferences } from './state-diff.js';
import { summarizeSide, uncalibratedJudges } from './summary.js';

/** One scenario's graded episodes per side; `base` null when the case has no base side. */
export interface CaseInput {
  scenario: Scenario;
  base: readonly GradedEpisode[] | null;
  head: readonly GradedEpisode[];
  /** The adaptive loop's last decision on this case, when it saw every episode the case has. */
  decision?: CaseDecision;
}

export interface CaseOptions {
  /** The k of pass@k and pass^k (default 1 and each side's N). */
  ks?: number[];
  /** At most this many state differences per case (default 20). */
  stateDiffCap?: number;
  /** stategate.yml's `ignore_columns` (of the policy's side); each scenario's own are added. */
  ignoreColumns?: IgnoreColumns;
  /** Adaptive repeats: classify with the sequential test of this policy. */
  sequential?: SequentialPolicy;
  /** The run loop's decision under `sequential`, taken instead of deciding again. */
  decision?: CaseDecision;
  /** Judge criteria calibrated for the judge's model; a judge expectation on any other is uncalibrated. */
  calibratedCriteria?: readonly string[];
}

/** The episode that shows a side best: graded, and passed or failed as asked, else the first. */
function representative(episodes: readonly GradedEpisode[], passed: boolean): GradedEpisode | undefined {
  const ordered = inRepeatOrder(episodes);
  const graded = ordered.filter(isGradable);
  return graded.find((e) => episodePassed(e) === passed) ?? graded[0] ?? ordered[0];
}

/** Summarises, classifies and explains one case from its graded episodes. */
export function compareCase(
  scenario: Scenario,
  base: readonly GradedEpisode[] | null,
  head: readonly GradedEpisode[],
  options: CaseOptions = {},
): CaseReport {
  const uncalibrated = uncalibratedJudges(scenario, options.calibratedCriteria);
  const baseSummary = base === null ? null : summarizeSide(scenario, base, options.ks, uncalibrated);
  const headSummary = summarizeSide(scenario, head, options.ks, uncalibrated);
  const decision = options.sequential
    ? (options.decision ?? decideCase(baseSummary, headSummary, options.sequential))
    : undefined;
  const c = classifySummaries(baseSummary, headSummary, ungradableNotes(base, head), decision);

  const report: CaseReport = {
    id: scenario.id,
    class: c.class,
    flaky: c.flaky,
    base: baseSummary,
    head: headSummary,
    divergence: null,
    state_diff: [],
    file: scenario.file,
    reason: c.reason,
    expectations_changed: c.expectations_changed,
  };
  if (scenario.description) report.description = scenario.description;
  // Annotations place themselves by these lines: nothing re-reads the scenario file at render time.
  if (scenario.lines) {
    report.lines = { scenario: scenario.lines.scenario, expectations: { ...scenario.lines.expectations } };
  }
  if (decision) {
    report.repeats_decision = {
      base: baseSummary?.runs ?? 0,
      head: headSummary.runs,
      reason: decision.reason,
    };
  }

  // An unchanged case has nothing to explain between the sides; a flaky side explains itself below.
  if (base && base.length > 0 && head.length > 0 && c.class !== 'unchanged') {
    // improved: show a failing base beside a passing head; otherwise a passing base beside a failing head.
    const improved = c.class === 'improved';
    const b = representative(base, !improved)!;
    const h = representative(head, improved)!;
    report.divergence =
      b.record.conversation && h.record.conversation
        ? firstConversationDivergence(
            { calls: b.record.calls, conversation: b.record.conversation },
            { calls: h.record.calls, conversation: h.record.conversation },
          )
        : firstDivergence(b.record.calls, h.record.calls);
    report.steps = { base: episodeSteps(b), head: episodeSteps(h) };
    const diff = stateDifferences(
      b.record.diff,
      h.record.diff,
      scenario,
      options.stateDiffCap ?? STATE_DIFF_CAP,
      mergeIgnoreColumns(options.ignoreColumns, scenario.ignore_columns),
    );
    report.state_diff = diff.differences;
    if (diff.cut > 0) report.state_diff_cut = diff.cut;
    if (diff.ignored.length > 0) report.ignored_columns = diff.ignored;
  } else if (base === null && head.length > 0 && c.class !== 'unchanged') {
    // No base to set beside it: a failing head repeat shows what the head did.
    report.steps = { base: null, head: episodeSteps(representative(head, false)!) };
  }

  // A crash or a missing result is shown on every case, still failing ones too.
  const stderr = { base: base ? agentStderr(base) : undefined, head: agentStderr(head) };
  if (stderr.base || stderr.head) {
    report.agent_stderr = {};
    if (stderr.base) report.agent_stderr.base = stderr.base;
    if (stderr.head) report.agent_stderr.head = stderr.head;
  }

  const flakyBase = c.flaky.base && base ? explainFlaky(base) : null;
  const flakyHead = c.flaky.head ? explainFlaky(head) : null;
  if (flakyBase || flakyHead) {
    report.flaky_explanation = {};
    if (flakyBase) report.flaky_explanation.base = flakyBase;
    if (flakyHead) report.flaky_explanation.head = flakyHead;
  }
  return report;
}
