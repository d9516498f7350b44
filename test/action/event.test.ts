// Event payloads shaped like the runner's, read from a real file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EventError, readEvent } from '../../src/action/event.js';

const dir = mkdtempSync(join(tmpdir(), 'stategate-event-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const BASE = 'b'.repeat(40);
const HEAD = 'a'.repeat(40);
const MERGE = 'c'.repeat(40);

function env(name: string, payload: unknown): NodeJS.ProcessEnv {
  const path = join(dir, `${name}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, typeof payload === 'string' ? payload : JSON.stringify(payload));
  return {
    GITHUB_EVENT_NAME: name,
    GITHUB_EVENT_PATH: path,
    GITHUB_REPOSITORY: 'acme/refunds',
    GITHUB_SHA: MERGE,
  };
}

const pr = (fork: boolean) => ({
  action: 'synchronize',
  number: 7,
  pull_request: {
    number: 7,
    head: {
      sha: HEAD,
      ref: 'lean-prompt',
      repo: { full_name: fork ? 'mallory/refunds' : 'acme/refunds', fork },
    },
    base: { sha: BASE, ref: 'main', repo: { full_name: 'acme/refunds', fork: false } },
  },
});

describe('readEvent', () => {
  it('takes the PR head (not the merge commit), its base and number', () => {
    expect(readEvent(env('pull_request', pr(false)))).toEqual({
      name: 'pull_request',
      owner: 'acme',
      repo: 'refunds',
      headSha: HEAD,
      baseSha: BASE,
      pullRequest: { number: 7, fork: false },
      workflowRun: null,
      headRepository: 'acme/refunds',
    });
  });

  it('reads pull_request_target like pull_request: the PR head, the event base, the head repository', () => {
    expect(readEvent(env('pull_request_target', pr(true)))).toMatchObject({
      name: 'pull_request_target',
      headSha: HEAD,
      baseSha: BASE,
      pullRequest: { number: 7, fork: true },
      headRepository: 'mallory/refunds',
    });
  });

  it('marks a PR from a fork', () => {
    expect(readEvent(env('pull_request', pr(true))).pullRequest).toEqual({ number: 7, fork: true });
  });

  it('has no base on push and workflow_dispatch', () => {
    expect(readEvent(env('push', { ref: 'refs/heads/main', before: BASE, after: MERGE }))).toMatchObject({
      headSha: MERGE,
      baseSha: null,
      pullRequest: null,
    });
    expect(readEvent(env('workflow_dispatch', { inputs: {} })).baseSha).toBeNull();
  });

  it('reads a workflow_run: the listed PR, or where to look a fork PR up', () => {
    const run = (prs: unknown[]) => ({
      workflow_run: {
        head_sha: HEAD,
        head_branch: 'lean-prompt',
        head_repository: { full_name: 'mallory/refunds', owner: { login: 'mallory' } },
        pull_requests: prs,
      },
    });
    expect(
      readEvent(env('workflow_run', run([{ number: 7, head: { sha: HEAD }, base: { sha: BASE } }]))),
    ).toMatchObject({
      headSha: HEAD,
      baseSha: BASE,
      pullRequest: { number: 7, fork: false },
    });
    expect(readEvent(env('workflow_run', run([])))).toMatchObject({
      pullRequest: null,
      workflowRun: { headOwner: 'mallory', headBranch: 'lean-prompt' },
      headRepository: 'mallory/refunds',
    });
  });

  it('says what is missing', () => {
    expect(() => readEvent(env('pull_request', { number: 7 }))).toThrow(/has no pull_request/);
    expect(() => readEvent(env('pull_request', '{not json'))).toThrow(EventError);
    expect(() => readEvent({ ...env('push', {}), GITHUB_REPOSITORY: 'acme' })).toThrow(/OWNER\/REPO/);
    expect(() => readEvent({ ...env('push', {}), GITHUB_EVENT_PATH: join(dir, 'missing.json') })).toThrow(
      /cannot read the event payload/,
    );
  });
});
