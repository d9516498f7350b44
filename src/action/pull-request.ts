// The pull request a workflow_run reports to: the payload lists it for same-repository PRs only.
import type { EventContext } from './event.js';
import type { GitHub } from './github.js';

/**
 * The PR number of the run: from the event when it names one, else (workflow_run from a fork) the
 * open pull request whose head is the run's branch at the run's commit; null when there is none.
 */
export async function pullRequestNumber(gh: GitHub, event: EventContext): Promise<number | null> {
  if (event.pullRequest) return event.pullRequest.number;
  if (!event.workflowRun) return null;
  const { data } = await gh.rest.pulls.list({
    owner: event.owner,
    repo: event.repo,
    state: 'open',
    head: `${event.workflowRun.headOwner}:${event.workflowRun.headBranch}`,
    per_page: 100,
  });
  // The branch may have moved on since the run: only the PR at this very commit gets the report.
  return data.find((pr) => pr.head.sha === event.headSha)?.number ?? null;
}
