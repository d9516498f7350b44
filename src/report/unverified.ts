// What a report from a run the base repository does not control says about itself: one sentence,
// the same in the comment, the check, the job summary and the terminal.
import type { Report } from '../model/report.js';

/** The sentence shown under the verdict of an unverified report; null for a verified one. */
export function unverifiedSentence(report: Pick<Report, 'unverified'>): string | null {
  if (!report.unverified) return null;
  return (
    `Unverified: these results come from a run this repository does not control (${report.unverified.reason}). ` +
    "Each case's class was recomputed from its counts and the verdict decided with this repository's gate, " +
    'but nothing was re-run here, so the check is neutral at best.'
  );
}

/** The verdict as a heading shows it: `PASS`, `WARN (unverified)`, `WARN (filtered)`. */
export function verdictWords(report: Pick<Report, 'verdict' | 'unverified' | 'filter'>): string {
  const marks = [report.unverified ? 'unverified' : '', report.filter ? 'filtered' : ''].filter(Boolean);
  return marks.length > 0 ? `${report.verdict} (${marks.join(', ')})` : report.verdict;
}
