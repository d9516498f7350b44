// Whether the base repository controls the run whose results this step posts. A report made by a
// fork's run (its artifact, posted from a workflow_run job with the base's token) is unverified:
// its check is neutral at best, whatever it says. An input can only lower trust, never raise it.
import type { EventContext } from './event.js';

/** reports-from: `auto` derives trust from the event; `untrusted` marks every report unverified. */
export type ReportsFrom = 'auto' | 'untrusted';

/**
 * Why this step's results are unverified, or null when the base repository controls the run that
 * made them. `merging`: the step posts reports another run made (the `merge` input).
 */
export function untrustedReason(
  event: EventContext,
  reportsFrom: ReportsFrom,
  merging: boolean,
): string | null {
  if (reportsFrom === 'untrusted') return 'reports-from: untrusted';
  const base = `${event.owner}/${event.repo}`;
  if (event.name === 'workflow_run') {
    if (event.headRepository === null) {
      return 'the workflow_run payload does not say which repository the triggering run came from';
    }
    if (event.headRepository.toLowerCase() !== base.toLowerCase()) {
      return `the triggering workflow run came from ${event.headRepository}, not ${base}`;
    }
    return null;
  }
  // A pull_request run from a fork runs the fork's workflow file: reports it uploads are the fork's word.
  if (event.name === 'pull_request' && merging && event.pullRequest?.fork) {
    return `the reports were made by a pull_request run from the fork ${event.headRepository ?? '(unknown)'}`;
  }
  return null;
}
