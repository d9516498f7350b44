// What to tell the user when GitHub refuses to take the check run or the comment.
import { apiStatus, isPermissionDenied } from './github.js';

const FORK_HINT =
  'On a pull request from a fork the token is read-only whatever the workflow asks: upload the report ' +
  'directory as an artifact and post it from a workflow_run job with `merge:` (see docs/action.md, "Pull requests from forks").';

/** A warning for a refused post: which permission to add, or how to post from a workflow_run job. */
export function postingWarning(what: 'check' | 'comment', err: unknown, fork: boolean): string {
  const status = apiStatus(err);
  const reason = err instanceof Error ? err.message : String(err);
  const action = what === 'check' ? 'create the stategate check run' : 'post the pull request comment';
  const head = `Stategate could not ${action}: GitHub answered ${status ?? 'with an error'} (${reason}).`;
  const unaffected = 'The verdict, the report and the job summary are unaffected.';
  if (!isPermissionDenied(err)) return `${head} ${unaffected}`;
  const permission = what === 'check' ? 'checks: write' : 'pull-requests: write';
  const fix = fork ? FORK_HINT : `Give the job \`permissions: ${permission}\`. ${FORK_HINT}`;
  return `${head} ${fix} ${unaffected}`;
}
