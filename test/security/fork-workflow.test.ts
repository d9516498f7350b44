// Attack: weaken the documented pull_request_target workflow a little, the way a copy drifts: a
// checkout that keeps the token in .git/config, a broader permission, a secret handed to the step,
// the head checked out over the base, the agent run as a plain process, a `run:` step that builds
// the head. Each would let the fork's code reach the base repository's token; this test reads the
// workflow from the docs (and the README) and fails on any of them.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { forkWorkflow, forkWorkflowText, stategateStep, type Workflow } from '../action/fork-workflow.js';

const HEAD_SHA = '${{ github.event.pull_request.head.sha }}';

function checkHardened(w: Workflow, text: string): void {
  // Only pull_request_target: the base branch's workflow file, never the fork's.
  expect(Object.keys(w.on)).toEqual(['pull_request_target']);

  // Least permissions, at the top, and no job widens them.
  expect(w.permissions).toEqual({ contents: 'read', checks: 'write', 'pull-requests': 'write' });
  for (const job of Object.values(w.jobs)) expect(job.permissions).toBeUndefined();

  const steps = Object.values(w.jobs).flatMap((j) => j.steps);
  // Nothing runs the head's code outside stategate.
  expect(steps.filter((s) => s.run !== undefined)).toEqual([]);

  // Every checkout leaves no credentials behind.
  const checkouts = steps.filter((s) => /^actions\/checkout@/.test(s.uses ?? ''));
  expect(checkouts).toHaveLength(2);
  for (const c of checkouts) expect(c.with?.['persist-credentials']).toBe(false);

  // The base is the workspace; the head, the event's exact commit, goes to a subdirectory.
  const [base, head] = checkouts;
  expect(base.with?.ref).toBeUndefined();
  expect(base.with?.path).toBeUndefined();
  expect(head.with?.ref).toBe(HEAD_SHA);
  expect(String(head.with?.path ?? '')).toMatch(/^[a-z][a-z0-9-]*$/);

  const step = stategateStep(w);
  expect(step.with?.['head-path']).toBe(head.with?.path);
  expect(step.with?.isolation).toBe('container');
  // The token stays the default one, used only to post; no secret and no environment reaches the step.
  expect(step.with?.['github-token']).toBeUndefined();
  expect(step.env).toBeUndefined();
  expect(w.env).toBeUndefined();
  for (const job of Object.values(w.jobs)) expect(job.env).toBeUndefined();
  expect(text).not.toMatch(/secrets\./);
}

describe('the documented pull_request_target workflow', () => {
  it('keeps its hardening in docs/action.md', () => {
    checkHardened(forkWorkflow('docs/action.md'), forkWorkflowText('docs/action.md'));
  });

  it('is the same workflow in the README', () => {
    expect(forkWorkflowText('README.md')).toBe(forkWorkflowText('docs/action.md'));
  });

  it('fails the check on each weakening', () => {
    const text = forkWorkflowText();
    const weakened = [
      text.replace(
        'persist-credentials: false\n      - uses: actions/checkout@v4',
        'persist-credentials: true\n      - uses: actions/checkout@v4',
      ),
      text.replace('  pull-requests: write\n', '  pull-requests: write\n  actions: write\n'),
      text.replace('          isolation: container\n', '          isolation: process\n'),
      text.replace(
        '          head-path: head\n',
        '          head-path: head\n        env:\n          OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}\n',
      ),
      text.replace('          path: head\n', ''),
      text.replace(
        '      - uses: OWNER/stategate@v1\n',
        '      - run: npm ci\n        working-directory: head\n      - uses: OWNER/stategate@v1\n',
      ),
    ];
    for (const w of weakened) {
      expect(w).not.toBe(text);
      expect(() => checkHardened(parse(w) as Workflow, w)).toThrow();
    }
  });
});
