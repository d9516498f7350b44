// The sticky comment over real HTTP against the loopback GitHub API.
import { afterEach, describe, expect, it } from 'vitest';
import { COMMENT_MARKER, upsertComment } from '../../src/action/comment.js';
import { createGitHub } from '../../src/action/github.js';
import { type GitHubApi, type GitHubApiOptions, startGitHubApi } from '../helpers/github-api.js';

let api: GitHubApi;
const target = { owner: 'acme', repo: 'refunds', issueNumber: 42 };

async function start(opts: GitHubApiOptions = {}) {
  api = await startGitHubApi({ owner: 'acme', repo: 'refunds', ...opts });
  return createGitHub('ghs_comment', api.url, () => {});
}

afterEach(async () => {
  expect(api.violations).toEqual([]);
  await api.close();
});

describe('sticky comment', () => {
  it('creates one comment, then edits it in place', async () => {
    const gh = await start();
    const first = await upsertComment(gh, target, '## Stategate: BLOCK');
    expect(first.action).toBe('created');
    const second = await upsertComment(gh, target, '## Stategate: PASS');
    expect(second).toMatchObject({ action: 'updated', id: first.id });
    const mine = api.comments.filter((c) => c.issue_number === 42);
    expect(mine).toHaveLength(1);
    expect(mine[0].body).toBe(`${COMMENT_MARKER}\n## Stategate: PASS`);
    expect(mine[0].user.login).toBe('github-actions[bot]');
  });

  it("does not take over a person's comment that quotes the marker", async () => {
    const gh = await start();
    const quoted = api.addComment(42, `Why does the bot write ${COMMENT_MARKER}?`, {
      login: 'octocat',
      type: 'User',
    });
    await upsertComment(gh, target, 'report');
    expect(api.comments.find((c) => c.id === quoted.id)!.body).toBe(
      `Why does the bot write ${COMMENT_MARKER}?`,
    );
    expect(api.comments.filter((c) => c.issue_number === 42)).toHaveLength(2);
  });

  it('finds its comment past the first page of 100', async () => {
    const gh = await start();
    const own = api.addComment(42, `${COMMENT_MARKER}\nold report`, {
      login: 'github-actions[bot]',
      type: 'Bot',
    });
    for (let i = 0; i < 130; i++) api.addComment(42, `comment ${i}`, { login: 'octocat', type: 'User' });
    // Move ours to the end of the list so it is on the second page.
    api.comments.push(api.comments.splice(api.comments.indexOf(own), 1)[0]);
    const done = await upsertComment(gh, target, 'new report');
    expect(done).toMatchObject({ action: 'updated', id: own.id });
    expect(
      api.requests.filter((r) => r.operationId === 'issues/list-comments').map((r) => r.query.page ?? '1'),
    ).toEqual(['1', '2']);
  });

  it("with a user token, edits only that user's marked comment", async () => {
    const gh = await start({ identity: { kind: 'user', login: 'release-bot' } });
    const other = api.addComment(42, `${COMMENT_MARKER}\nfrom another workflow`, {
      login: 'github-actions[bot]',
      type: 'Bot',
    });
    const first = await upsertComment(gh, target, 'report 1');
    expect(first.action).toBe('created');
    expect(api.comments.find((c) => c.id === first.id)!.user.login).toBe('release-bot');
    const second = await upsertComment(gh, target, 'report 2');
    expect(second).toMatchObject({ action: 'updated', id: first.id });
    expect(api.comments.find((c) => c.id === other.id)!.body).toContain('from another workflow');
  });

  it('surfaces 403 to the caller when comments are refused', async () => {
    const gh = await start();
    api.forbid.comments = true;
    await expect(upsertComment(gh, target, 'report')).rejects.toMatchObject({ status: 403 });
    expect(api.comments).toHaveLength(0);
  });
});
