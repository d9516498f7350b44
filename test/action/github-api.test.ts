// The loopback GitHub API refuses what GitHub's OpenAPI description does not allow: a test relying
// on it can fail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitHubApi, startGitHubApi } from '../helpers/github-api.js';

let api: GitHubApi;
const headers = { authorization: 'token ghs_test', 'content-type': 'application/json' };

beforeAll(async () => {
  api = await startGitHubApi({ owner: 'acme', repo: 'refunds' });
});
afterAll(() => api.close());

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

describe('loopback GitHub API', () => {
  it('refuses a check run without the required head_sha', async () => {
    const before = api.violations.length;
    const res = await call('POST', '/repos/acme/refunds/check-runs', {
      name: 'stategate',
      status: 'in_progress',
    });
    expect(res.status).toBe(400);
    expect(api.violations.length).toBe(before + 1);
    expect(api.violations.at(-1)!.problems.join('\n')).toMatch(/head_sha/);
  });

  it('refuses 51 annotations in one request and a wrong annotation level', async () => {
    const created = await call('POST', '/repos/acme/refunds/check-runs', {
      name: 'stategate',
      head_sha: 'a'.repeat(40),
    });
    expect(created.status).toBe(201);
    const annotation = {
      path: 'scenarios/a.yaml',
      start_line: 1,
      end_line: 1,
      annotation_level: 'failure',
      message: 'x',
    };
    const many = await call('PATCH', `/repos/acme/refunds/check-runs/${created.body.id}`, {
      output: { title: 't', summary: 's', annotations: Array.from({ length: 51 }, () => annotation) },
    });
    expect(many.status).toBe(400);
    const level = await call('PATCH', `/repos/acme/refunds/check-runs/${created.body.id}`, {
      output: { title: 't', summary: 's', annotations: [{ ...annotation, annotation_level: 'error' }] },
    });
    expect(level.status).toBe(400);
    expect(api.violations.at(-1)!.problems.join('\n')).toMatch(/annotation_level/);
  });

  it('refuses paths and methods GitHub does not have, and a non-integer id', async () => {
    expect((await call('POST', '/repos/acme/refunds/check-run', { name: 'x', head_sha: 'y' })).status).toBe(
      400,
    );
    expect((await call('DELETE', '/repos/acme/refunds/check-runs/1')).status).toBe(400);
    expect(
      (await call('PATCH', '/repos/acme/refunds/check-runs/abc', { status: 'in_progress' })).status,
    ).toBe(400);
    expect((await call('GET', '/repos/acme/refunds/issues/1/comments?per_page=100&bogus=1')).status).toBe(
      400,
    );
  });

  it('refuses a comment without a body and a summary over 65,535 characters', async () => {
    expect((await call('POST', '/repos/acme/refunds/issues/3/comments', { text: 'hi' })).status).toBe(400);
    const created = await call('POST', '/repos/acme/refunds/check-runs', {
      name: 'stategate',
      head_sha: 'b'.repeat(40),
      output: { title: 't', summary: 'x'.repeat(65_536) },
    });
    expect(created.status).toBe(400);
  });

  it('answers valid requests with documented shapes and records them', async () => {
    const violations = api.violations.length;
    const res = await call('POST', '/repos/acme/refunds/issues/3/comments', { body: 'hello' });
    expect(res.status).toBe(201);
    expect(res.body.user.login).toBe('github-actions[bot]');
    expect(res.body.html_url).toMatch(/^https:\/\/github\.com\/acme\/refunds\/pull\/3#issuecomment-\d+$/);
    const user = await call('GET', '/user');
    expect(user.status).toBe(403);
    expect(api.comments.find((c) => c.id === res.body.id)?.body).toBe('hello');
    expect(api.violations.length).toBe(violations);
  });

  it('asks for authentication', async () => {
    const res = await fetch(`${api.url}/repos/acme/refunds/issues/3/comments`);
    expect(res.status).toBe(401);
  });
});
