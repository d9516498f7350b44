// The loopback GitHub API's answers, shaped as api.github.com shapes them (the server checks each
// against the documented response schema). Built on the OpenAPI description's own examples.
import type { CheckRunState, CommentState, PullRequestState } from './github-api.js';
import { GitHubOpenApi } from './github-openapi.js';

type Json = Record<string, any>;

function example(name: string): Json {
  return structuredClone(GitHubOpenApi.load().spec.components.examples[name].value);
}

/** A simple-user object, as comments and pull requests carry it. */
export function simpleUser(login: string, id: number, type: 'User' | 'Bot'): Json {
  const api = `https://api.github.com/users/${encodeURIComponent(login)}`;
  return {
    login,
    id,
    node_id: Buffer.from(`User${id}`).toString('base64'),
    avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
    gravatar_id: '',
    url: api,
    html_url:
      type === 'Bot'
        ? `https://github.com/apps/${login.replace(/\[bot\]$/, '')}`
        : `https://github.com/${login}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type,
    site_admin: false,
  };
}

/** GET /user for a personal token. */
export function privateUser(login: string): Json {
  return { ...example('private-user'), ...simpleUser(login, 583231, 'User') };
}

/** A check run. */
export function checkRunJson(owner: string, repo: string, run: CheckRunState): Json {
  const api = `https://api.github.com/repos/${owner}/${repo}`;
  return {
    ...example('check-run'),
    id: run.id,
    node_id: Buffer.from(`CheckRun${run.id}`).toString('base64'),
    head_sha: run.head_sha,
    external_id: '',
    url: `${api}/check-runs/${run.id}`,
    html_url: `https://github.com/${owner}/${repo}/runs/${run.id}`,
    details_url: run.details_url,
    status: run.status,
    conclusion: run.conclusion,
    started_at: run.started_at,
    completed_at: run.completed_at,
    output: {
      ...run.output,
      annotations_count: run.annotations.length,
      annotations_url: `${api}/check-runs/${run.id}/annotations`,
    },
    name: run.name,
    check_suite: { id: 5 },
    pull_requests: [],
  };
}

/** An issue comment. */
export function commentJson(owner: string, repo: string, c: CommentState): Json {
  return {
    id: c.id,
    node_id: Buffer.from(`IssueComment${c.id}`).toString('base64'),
    url: `https://api.github.com/repos/${owner}/${repo}/issues/comments/${c.id}`,
    html_url: `https://github.com/${owner}/${repo}/pull/${c.issue_number}#issuecomment-${c.id}`,
    body: c.body,
    user: simpleUser(c.user.login, c.user.id, c.user.type),
    created_at: c.created_at,
    updated_at: c.updated_at,
    issue_url: `https://api.github.com/repos/${owner}/${repo}/issues/${c.issue_number}`,
    author_association: c.user.type === 'Bot' ? 'NONE' : 'MEMBER',
  };
}

/** A pull request as GET /repos/{owner}/{repo}/pulls lists it. */
export function pullJson(owner: string, repo: string, p: PullRequestState): Json {
  const base = example('pull-request-simple');
  const api = `https://api.github.com/repos/${owner}/${repo}`;
  return {
    ...base,
    id: 1_000 + p.number,
    number: p.number,
    url: `${api}/pulls/${p.number}`,
    html_url: `https://github.com/${owner}/${repo}/pull/${p.number}`,
    state: 'open',
    // The description's own example lists a team without the `type` its schema requires.
    requested_teams: [],
    requested_reviewers: [],
    head: {
      ...base.head,
      label: `${p.headOwner}:${p.headBranch}`,
      ref: p.headBranch,
      sha: p.headSha,
      user: simpleUser(p.headOwner, 7, 'User'),
    },
  };
}
