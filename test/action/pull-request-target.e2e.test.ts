// The trusted fork workflow of docs/action.md, as the runner runs it on pull_request_target: the
// workspace is the base branch (the first checkout), the fork's PR head is checked out into `head/`
// (the second), and the documented stategate step runs `node dist/index.js` with the base
// repository's token against the loopback GitHub API.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentVersion, checkout } from './demo-repo.js';
import { forkWorkflow, stategateStep } from './fork-workflow.js';
import { Harness, lineOf, OWNER, REPO, TOKEN } from './harness.js';
import { runStep, type StepOptions } from './runner.js';

let h: Harness;

beforeAll(async () => {
  h = await Harness.start([agentVersion('1.2.4')], {
    'lean-prompt': [agentVersion('1.3.0')],
    'careful-fix': [agentVersion('1.3.1')],
  });
});
afterAll(() => h?.close());

/** The pull_request_target payload GitHub sends for a fork's PR: the same pull_request object. */
function targetEvent(number: number, branch: string): StepOptions['event'] {
  const event = h.pullRequestEvent(number, branch, true);
  return { name: 'pull_request_target', payload: event.payload };
}

/** The documented job: base checkout in the workspace, the head in its subdirectory, the stategate step. */
async function documentedJob(
  number: number,
  branch: string,
  name: string,
  overrides: Record<string, string> = {},
) {
  const step = stategateStep(forkWorkflow());
  const headPath = String(step.with?.['head-path']);
  const ws = checkout(h.repo, 'main', join(h.root, name));
  checkout(h.repo, branch, join(ws, headPath));
  // `isolation: container` needs a container runtime, which the container tests cover; here the
  // agent runs as a process, and every other input is the documented one.
  const { isolation: _isolation, ...inputs } = step.with ?? {};
  const result = await runStep({
    workspace: ws,
    with: { ...inputs, repeats: 1, ...overrides },
    event: targetEvent(number, branch),
    repository: `${OWNER}/${REPO}`,
    // On pull_request_target, GITHUB_SHA is the base branch's last commit.
    sha: h.repo.base.sha,
    apiUrl: h.api.url,
    token: TOKEN,
    runnerTemp: join(h.root, 'runner'),
  });
  expect(h.api.violations).toEqual([]);
  return { ...result, workspace: ws, headPath };
}

describe('the action on pull_request_target, the head in a subdirectory', () => {
  it('compares the event base with the checked-out head and posts on the PR head commit', async () => {
    const r = await documentedJob(71, 'lean-prompt', 'target-block');
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.outputs.verdict).toBe('BLOCK');
    const report = JSON.parse(readFileSync(r.outputs['report-path'], 'utf8'));
    expect(report.sides).toMatchObject({
      base: { sha: h.repo.base.sha },
      head: { ref: 'head', sha: h.repo.branches['lean-prompt'].sha },
    });
    expect(report.unverified).toBeUndefined();
    expect(r.stdout).toContain(`base ${h.repo.base.sha} (from the pull_request_target event`);

    const [run] = h.checkRunsOn('lean-prompt');
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(run.output.title).toMatch(/^BLOCK: 2 new critical failures/);
    // Annotations are paths in the head's repository, at the lines of the head's files.
    const failures = run.annotations.filter((a) => a.annotation_level === 'failure');
    expect(failures.length).toBeGreaterThan(0);
    for (const a of failures) {
      expect(a.path).toMatch(/^scenarios\/[a-z0-9-]+\.yaml$/);
      const expectation = /expectation (\S+)/.exec(a.title)![1];
      expect(a.start_line, a.title).toBe(lineOf(join(r.workspace, r.headPath, a.path), expectation));
    }
    expect(h.comments(71)).toHaveLength(1);
    expect(h.comments(71)[0].body).toContain('## Stategate: BLOCK');
  });

  it('refuses to run when the head is the base checkout (head-path left at the workspace)', async () => {
    const r = await documentedJob(73, 'careful-fix', 'target-no-head', { 'head-path': '.' });
    expect(r.code).toBe(1);
    expect(r.outputs.verdict).toBeUndefined();
    const message = `pull_request_target: the head (head-path: .) is at ${h.repo.base.sha}, not the pull request's head ${h.repo.branches['careful-fix'].sha}.`;
    expect(r.commands.filter((c) => c.command === 'error').map((c) => c.message)).toEqual([
      expect.stringContaining(message),
    ]);
    expect(h.checkRunsOn('careful-fix').at(-1)).toMatchObject({
      status: 'completed',
      conclusion: 'failure',
      output: { title: 'Stategate could not run', summary: expect.stringContaining(message) },
    });
    expect(h.comments(73)).toHaveLength(0);
  });

  it('passes the careful fix with a success check: the base repository ran it', async () => {
    const r = await documentedJob(72, 'careful-fix', 'target-pass');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.outputs.verdict).toBe('PASS');
    expect(h.checkRunsOn('careful-fix').at(-1)).toMatchObject({ status: 'completed', conclusion: 'success' });
    expect(h.comments(72)[0].body).toContain('## Stategate: PASS\n');
    for (const f of ['report.json', 'report.md', 'episodes.jsonl']) {
      expect(readFileSync(join(r.workspace, '.stategate', f), 'utf8')).not.toContain(TOKEN);
    }
    // The runner masks the token; nothing else prints it.
    const printed = (r.stdout + r.stderr).split('\n').filter((l) => !l.startsWith('::add-mask::'));
    expect(printed.join('\n')).not.toContain(TOKEN);
  });
});
