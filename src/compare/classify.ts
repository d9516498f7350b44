// Classification of one case, base -> head; the classes, and the order in which the first match wins,
// are the table in docs/statistics.md. `flaky` stands beside any class.
// A case without a base side (a new scenario, or a head-only run) has no evidence to compare
// against, so it is classified by the head alone: a critical failure is a new-critical-failure,
// any other failure regressed, else unchanged; its reason says so. Before incomplete: a head whose
// tool calls alone provoked SQL errors in the twin (provokedErrors) is a new-critical-failure, and so
// is a head that broke a critical expectation in the repeats that could be graded, or left a state or
// reply on which one the base passed cleanly could not be evaluated (headOnlyErrors): otherwise a head
// could turn its own BLOCK into a WARN by making its episodes ungradable.
import { type CaseClass, NEW_SCENARIO } from '../model/classes.js';
import type { FailureLabel, GradedEpisode, Side } from '../model/episode.js';
import type { ChangedExpectation, ExpectationCounts, SideSummary } from '../model/report.js';
import type { CaseDecision } from '../stats/case-decision.js';
import { COMPLETED, inRepeatOrder, ungradableReason } from './episodes.js';

export interface Classification {
  class: CaseClass;
  flaky: { base: boolean; head: boolean };
  /** One plain sentence naming the evidence behind the class. */
  reason: string;
  expectations_changed: ChangedExpectation[];
}

/** Per side: the first reason an episode could not be graded, for the `incomplete` sentence. */
export type UngradableNotes = Partial<Record<Side, string>>;

/** Whether a side's repeats disagree: some passed every expectation, some graded ones did not. */
export function isFlaky(summary: SideSummary | null): boolean {
  if (!summary) return false;
  const graded = summary.runs - (summary.infraErrors ?? 0);
  return summary.passes > 0 && summary.passes < graded;
}

function counts(c: ExpectationCounts | undefined): { pass: number; fail: number; error: number } {
  return { pass: c?.pass ?? 0, fail: c?.fail ?? 0, error: c?.error ?? 0 };
}

/** The most frequent failure label; ties go to the alphabetically first, so the choice is stable. */
function topLabel(c: ExpectationCounts | undefined): FailureLabel | undefined {
  const entries = Object.entries(c?.labels ?? {}) as [FailureLabel, number][];
  entries.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return entries[0]?.[0];
}

function ids(base: SideSummary | null, head: SideSummary): string[] {
  return [...new Set([...Object.keys(head.expectations), ...Object.keys(base?.expectations ?? {})])];
}

function changedExpectations(
  base: SideSummary | null,
  head: SideSummary,
  decision?: CaseDecision,
): ChangedExpectation[] {
  const broke: ChangedExpectation[] = [];
  const preexisting: ChangedExpectation[] = [];
  const fixed: ChangedExpectation[] = [];
  const errored: ChangedExpectation[] = [];
  for (const id of ids(base, head)) {
    const h = head.expectations[id];
    const b = base?.expectations[id];
    const critical = h?.critical ?? b?.critical ?? false;
    const entry = (
      change: ChangedExpectation['change'],
      from: ExpectationCounts | undefined,
    ): ChangedExpectation => {
      const e: ChangedExpectation = { id, critical, change, base: counts(b), head: counts(h) };
      if (h?.uncalibrated || b?.uncalibrated) e.uncalibrated = true;
      const label = topLabel(from);
      if (label) e.label = label;
      if (from?.example !== undefined) e.message = from.example;
      return e;
    };
    const headFailed = (h?.fail ?? 0) > 0;
    const basePassedAll = base === null || (base.runs > 0 && (b?.pass ?? 0) === base.runs);
    const baseFailed = (b?.fail ?? 0) > 0;
    const headPassedAll = head.runs > 0 && (h?.pass ?? 0) === head.runs;
    const test = decision?.expectations[id];
    if (test && base !== null && headFailed) {
      // Adaptive repeats: the sequential test, not a single failure, says whether the head is worse.
      const e = entry(test.decision === 'worse' || basePassedAll ? 'broke' : 'pre-existing', h);
      e.test = { decision: test.decision, p: test.p };
      (e.change === 'broke' ? broke : preexisting).push(e);
    } else if (headFailed && basePassedAll) broke.push(entry('broke', h));
    else if (base !== null && baseFailed && headPassedAll) fixed.push(entry('fixed', b));
    if ((h?.error ?? 0) > 0 || (b?.error ?? 0) > 0) errored.push(entry('error', (h?.error ?? 0) > 0 ? h : b));
  }
  // Critical breaks lead: they are what a reviewer must read first.
  broke.sort((x, y) => Number(y.critical) - Number(x.critical));
  return [...broke, ...fixed, ...preexisting, ...errored];
}

/**
 * A break that blocks: critical, not an uncalibrated judge verdict, and (with adaptive repeats) the
 * test says the head is worse.
 */
function blocks(c: ChangedExpectation): boolean {
  return c.critical && !c.uncalibrated && (c.test === undefined || c.test.decision === 'worse');
}

/**
 * Expectations the head could not evaluate in some repeat the harness did not stop, while every base
 * repeat passed them: the agent left a state or reply the base's never did (a second row for an
 * `equals`, no reply for the judge), so the error is the head's failure, not a broken suite.
 */
function headOnlyErrors(
  base: SideSummary | null,
  head: SideSummary,
  changed: ChangedExpectation[],
): ChangedExpectation[] {
  if (!base || base.runs === 0) return [];
  // Errors of repeats the harness stopped, or of a judge that did not answer, say nothing about the agent.
  return changed.filter(
    (c) =>
      c.change === 'error' &&
      (head.expectations[c.id]?.agentErrors ?? 0) > 0 &&
      (base.expectations[c.id]?.pass ?? 0) === base.runs,
  );
}

function headErrorReason(changes: ChangedExpectation[], base: SideSummary, head: SideSummary): string {
  const [first, ...rest] = changes;
  const kind = first.critical ? 'Critical expectation' : 'Expectation';
  const why = first.message ? ` (${first.message})` : '';
  const more = rest.length > 0 ? `; so did ${plural(rest.length, 'more expectation')}` : '';
  return `${kind} ${first.id} could not be evaluated on what the head left in ${head.expectations[first.id]?.agentErrors ?? first.head.error} of ${head.runs} head repeats${why} and passed in all ${base.runs} base repeats${more}.`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function incompleteReason(
  base: SideSummary | null,
  head: SideSummary,
  notes: UngradableNotes,
): string | null {
  const parts: string[] = [];
  for (const [side, s] of [
    ['base', base],
    ['head', head],
  ] as const) {
    if (!s) continue;
    if (s.runs === 0) parts.push(`the ${side} has no episodes of this scenario`);
    else if ((s.infraErrors ?? 0) > 0) {
      const note = notes[side] ? ` (${notes[side]})` : '';
      parts.push(`${s.infraErrors} of ${s.runs} ${side} repeats could not be graded${note}`);
    }
  }
  if (parts.length === 0) return null;
  const sentence = parts.join('; ');
  return `${sentence[0].toUpperCase()}${sentence.slice(1)}.`;
}

/** The incomplete sentence of a case in which no episode of any side completed, or null. */
function neitherCompleted(base: SideSummary | null, head: SideSummary): string | null {
  const sides = base ? [base, head] : [head];
  if (sides.some((s) => s.runs === 0 || (s.expectations[COMPLETED]?.pass ?? 0) > 0)) return null;
  const example = head.expectations[COMPLETED]?.example ?? base?.expectations[COMPLETED]?.example;
  const who = base ? 'neither side completed an episode' : 'the head completed no episode';
  return `${who[0].toUpperCase()}${who.slice(1)}: ${example ?? 'every repeat ended without a result'} (base ${base?.runs ?? 0}, head ${head.runs} repeats).`;
}

function brokeReason(changes: ChangedExpectation[], base: SideSummary | null, head: SideSummary): string {
  const [first, ...rest] = changes;
  const kind = first.critical ? 'critical expectation' : 'expectation';
  const what = `${base ? kind[0].toUpperCase() + kind.slice(1) : kind} ${first.id}`;
  const where = `failed in ${first.head.fail} of ${head.runs} head repeats`;
  const against = !base
    ? ''
    : first.base.fail === 0
      ? ` and passed in all ${base.runs} base repeats`
      : ` and in only ${first.base.fail} of ${base.runs} base repeats`;
  const more = rest.length > 0 ? `; ${plural(rest.length, 'more expectation')} broke` : '';
  const judge = !first.uncalibrated
    ? ''
    : first.critical
      ? '; its judge criterion is uncalibrated for this judge model, so it warns instead of blocking'
      : '; its judge criterion is uncalibrated for this judge model';
  const test = !first.test
    ? ''
    : first.test.decision === 'worse'
      ? `; the sequential test says the head is worse (p=${pValue(first.test.p)})`
      : first.critical
        ? `; the sequential test could not tell the head worse (p=${pValue(first.test.p)}), so it does not block`
        : `; the sequential test could not tell the head worse (p=${pValue(first.test.p)})`;
  return `${base ? '' : NEW_SCENARIO}${what} ${where}${against}${judge}${more}${test}.`;
}

function pValue(p: number | null): string {
  return p === null ? '—' : p < 0.001 ? '<0.001' : p.toFixed(3);
}

function preexistingReason(changes: ChangedExpectation[], base: SideSummary, head: SideSummary): string {
  const items = changes.map(
    (c) =>
      `${c.id} failed in ${c.base.fail} of ${base.runs} base and ${c.head.fail} of ${head.runs} head repeats`,
  );
  return `The failure is pre-existing: ${items.join('; ')}; the sequential test cannot tell the sides apart.`;
}

function fixedReason(changes: ChangedExpectation[], base: SideSummary, head: SideSummary): string {
  const [first, ...rest] = changes;
  const more = rest.length > 0 ? `; ${plural(rest.length, 'more expectation')} fixed` : '';
  return `Expectation ${first.id} failed in ${first.base.fail} of ${base.runs} base repeats and passed in all ${head.runs} head repeats${more}.`;
}

function unchangedReason(base: SideSummary | null, head: SideSummary): string {
  if (!base) return `${NEW_SCENARIO}the head passed ${head.passes} of ${head.runs} repeats.`;
  if (base.passes === base.runs && head.passes === head.runs) {
    return `Both sides passed every expectation in every repeat (base ${base.runs}, head ${head.runs}).`;
  }
  return `No expectation broke or was fixed; the base passed ${base.passes} of ${base.runs} repeats, the head ${head.passes} of ${head.runs}.`;
}

/**
 * Classifies a case from its side summaries. `base` null means the case has no base side; a side
 * with zero runs is a case that exists on that side but has no episodes, hence incomplete.
 */
export function classifySummaries(
  base: SideSummary | null,
  head: SideSummary,
  notes: UngradableNotes = {},
  decision?: CaseDecision,
): Classification {
  const flaky = { base: isFlaky(base), head: isFlaky(head) };
  const changed = changedExpectations(base, head, decision);
  const result = (cls: CaseClass, reason: string): Classification => ({
    class: cls,
    flaky,
    reason,
    expectations_changed: changed,
  });

  // Only the head's calls provoked SQL errors in the twin: its doing, not a broken suite,
  // so it may not pass as `incomplete` (a warning) what the base never did.
  const headErrors = head.provokedErrors ?? 0;
  if (base && base.runs > 0 && headErrors > 0 && (base.provokedErrors ?? 0) === 0) {
    const note = notes.head ? ` (${notes.head})` : '';
    return result(
      'new-critical-failure',
      `In ${headErrors} of ${head.runs} head repeats a tool call made the twin's SQL fail inside the harness${note}; no base repeat did.`,
    );
  }
  const incomplete = incompleteReason(base, head, notes);
  const broke = changed.filter((c) => c.change === 'broke');
  const critical = broke.filter(blocks);
  if (incomplete) {
    // What could be graded still counts: errors elsewhere do not excuse a break the repeats show.
    const ungraded = ` ${incomplete}`;
    if (critical.length > 0) {
      const ordered = [...critical, ...broke.filter((c) => !critical.includes(c))];
      return result('new-critical-failure', `${brokeReason(ordered, base, head)}${ungraded}`);
    }
    const headOnly = base ? headOnlyErrors(base, head, changed) : [];
    const blocking = headOnly.filter(blocks);
    if (base && blocking.length > 0) {
      const ordered = [...blocking, ...headOnly.filter((c) => !blocking.includes(c))];
      return result('new-critical-failure', headErrorReason(ordered, base, head));
    }
    if (broke.length > 0) return result('regressed', `${brokeReason(broke, base, head)}${ungraded}`);
    if (base && headOnly.length > 0) return result('regressed', headErrorReason(headOnly, base, head));
    return result('incomplete', incomplete);
  }
  if (critical.length > 0) {
    const ordered = [...critical, ...broke.filter((c) => !critical.includes(c))];
    return result('new-critical-failure', brokeReason(ordered, base, head));
  }
  if (broke.length > 0) return result('regressed', brokeReason(broke, base, head));
  // Nothing of the agent ran to its end on either side (a missing key, a crash at start): nothing
  // was tested, and a case that tested nothing is not a pass.
  const notCompleted = neitherCompleted(base, head);
  if (notCompleted) return result('incomplete', notCompleted);
  const fixed = changed.filter((c) => c.change === 'fixed');
  if (base && fixed.length > 0) return result('improved', fixedReason(fixed, base, head));
  const preexisting = changed.filter((c) => c.change === 'pre-existing');
  if (base && preexisting.length > 0) return result('unchanged', preexistingReason(preexisting, base, head));
  return result('unchanged', unchangedReason(base, head));
}

/** The first reason each side's episodes could not be graded, in repeat order. */
export function ungradableNotes(
  base: readonly GradedEpisode[] | null,
  head: readonly GradedEpisode[],
): UngradableNotes {
  const notes: UngradableNotes = {};
  for (const [side, episodes] of [
    ['base', base],
    ['head', head],
  ] as const) {
    const note = inRepeatOrder(episodes ?? [])
      .map(ungradableReason)
      .find((r) => r !== null);
    if (note) notes[side] = note;
  }
  return notes;
}
