// What the workflow run is about: repository, the commit to report on, the PR and its base.
import { readFileSync } from 'node:fs';

/** The pull request a run reports to. */
export interface PullRequestRef {
  number: number;
  /** A PR from a fork: its token is read-only, so posting is expected to be refused. */
  fork: boolean;
}

/** The facts of the triggering event the action needs. */
export interface EventContext {
  name: string;
  owner: string;
  repo: string;
  /** The commit the check run is attached to (the PR head, not the merge commit). */
  headSha: string;
  /** The PR's base commit; null for events without one (push, workflow_dispatch). */
  baseSha: string | null;
  pullRequest: PullRequestRef | null;
  /** workflow_run only: where to look the PR up when the payload lists none (fork PRs). */
  workflowRun: { headOwner: string; headBranch: string } | null;
  /**
   * OWNER/REPO the head came from: the PR's head repository, or the triggering run's
   * (workflow_run.head_repository); null when the payload does not say or the event has none.
   */
  headRepository: string | null;
}

/** Thrown when the runner's environment or the event payload lacks what the action needs. */
export class EventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EventError';
  }
}

type Json = Record<string, any>;

/** Reads GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_REPOSITORY and GITHUB_SHA into an EventContext. */
export function readEvent(env: NodeJS.ProcessEnv): EventContext {
  const name = env.GITHUB_EVENT_NAME ?? '';
  const repository = env.GITHUB_REPOSITORY ?? '';
  const [owner, repo] = repository.split('/');
  if (!owner || !repo) {
    throw new EventError(`GITHUB_REPOSITORY must be OWNER/REPO, got "${repository}"`);
  }
  const payload = readPayload(env.GITHUB_EVENT_PATH);
  const sha = env.GITHUB_SHA ?? '';

  if (name === 'pull_request' || name === 'pull_request_target') {
    const pr = payload.pull_request as Json | undefined;
    if (!pr) throw new EventError(`the ${name} payload at ${env.GITHUB_EVENT_PATH} has no pull_request`);
    const headSha = str(pr.head?.sha, 'pull_request.head.sha');
    const baseSha = str(pr.base?.sha, 'pull_request.base.sha');
    const number = pr.number;
    if (!Number.isInteger(number)) throw new EventError('the event payload has no pull_request.number');
    const headRepo = pr.head?.repo?.full_name;
    // A head repository the payload does not name (a deleted fork) is not known to be this one.
    const fork = pr.head?.repo?.fork === true || typeof headRepo !== 'string' || headRepo !== repository;
    return {
      name,
      owner,
      repo,
      headSha,
      baseSha,
      pullRequest: { number, fork },
      workflowRun: null,
      headRepository: typeof headRepo === 'string' ? headRepo : null,
    };
  }

  if (name === 'workflow_run') {
    const run = payload.workflow_run as Json | undefined;
    if (!run)
      throw new EventError(`the workflow_run payload at ${env.GITHUB_EVENT_PATH} has no workflow_run`);
    const headSha = str(run.head_sha, 'workflow_run.head_sha');
    // The payload lists the PR only when it comes from this repository; forks are looked up by branch.
    const prs: Json[] = Array.isArray(run.pull_requests) ? run.pull_requests : [];
    const listed = prs.find((p) => p?.head?.sha === headSha) ?? prs[0];
    const headOwner = run.head_repository?.owner?.login;
    const headBranch = run.head_branch;
    return {
      name,
      owner,
      repo,
      headSha,
      baseSha: typeof listed?.base?.sha === 'string' ? listed.base.sha : null,
      pullRequest: listed && Number.isInteger(listed.number) ? { number: listed.number, fork: false } : null,
      workflowRun:
        typeof headOwner === 'string' && typeof headBranch === 'string' ? { headOwner, headBranch } : null,
      headRepository:
        typeof run.head_repository?.full_name === 'string' ? run.head_repository.full_name : null,
    };
  }

  if (!/^[0-9a-f]{40}$/.test(sha)) throw new EventError(`GITHUB_SHA must be a commit SHA, got "${sha}"`);
  return {
    name,
    owner,
    repo,
    headSha: sha,
    baseSha: null,
    pullRequest: null,
    workflowRun: null,
    headRepository: null,
  };
}

function readPayload(path: string | undefined): Json {
  if (!path) return {};
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new EventError(
      `cannot read the event payload GITHUB_EVENT_PATH=${path}: ${(err as Error).message}`,
    );
  }
  try {
    const value = JSON.parse(text);
    if (value === null || typeof value !== 'object') throw new Error('not an object');
    return value;
  } catch (err) {
    throw new EventError(`the event payload ${path} is not a JSON object: ${(err as Error).message}`);
  }
}

function str(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw new EventError(`the event payload has no ${field}`);
  return value;
}
