// Which runs the base repository controls: read from real event payload files, as the action reads them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { untrustedReason } from '../../src/action/trust.js';
import { EVENT_SHA, readEventFile } from '../helpers/event-file.js';

const dir = mkdtempSync(join(tmpdir(), 'stategate-trust-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SHA = EVENT_SHA;
const event = (name: string, payload: unknown) => readEventFile(dir, name, payload);

const workflowRun = (headRepository?: string) => ({
  workflow_run: {
    head_sha: SHA,
    head_branch: 'lean-prompt',
    ...(headRepository ? { head_repository: { full_name: headRepository, owner: { login: 'x' } } } : {}),
    pull_requests: [],
  },
});

const pullRequest = (fork: boolean) => ({
  pull_request: {
    number: 7,
    head: { sha: SHA, repo: { full_name: fork ? 'mallory/refunds' : 'acme/refunds', fork } },
    base: { sha: 'b'.repeat(40), repo: { full_name: 'acme/refunds', fork: false } },
  },
});

describe('untrustedReason', () => {
  it('distrusts a workflow_run triggered from another repository, or from one it cannot name', () => {
    expect(untrustedReason(event('workflow_run', workflowRun('mallory/refunds')), 'auto', true)).toBe(
      'the triggering workflow run came from mallory/refunds, not acme/refunds',
    );
    expect(untrustedReason(event('workflow_run', workflowRun()), 'auto', true)).toBe(
      'the workflow_run payload does not say which repository the triggering run came from',
    );
    expect(untrustedReason(event('workflow_run', workflowRun('ACME/refunds')), 'auto', true)).toBeNull();
  });

  it('distrusts reports merged in a fork pull_request run; trusts pull_request_target and same-repository runs', () => {
    expect(untrustedReason(event('pull_request', pullRequest(true)), 'auto', true)).toMatch(
      /fork mallory\/refunds/,
    );
    expect(untrustedReason(event('pull_request', pullRequest(false)), 'auto', true)).toBeNull();
    expect(untrustedReason(event('pull_request_target', pullRequest(true)), 'auto', false)).toBeNull();
    expect(untrustedReason(event('push', {}), 'auto', false)).toBeNull();
  });

  it('reports-from: untrusted distrusts every run', () => {
    expect(untrustedReason(event('push', {}), 'untrusted', false)).toBe('reports-from: untrusted');
  });
});
