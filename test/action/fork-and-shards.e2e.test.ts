// The action on a fork's pull request (read-only token), posting from a workflow_run job, and a
// sharded matrix joined by a merge job: `node dist/index.js` as the runner runs it.
import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentVersion } from './demo-repo.js';
import { errors, Harness, warnings } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await Harness.start(
    [agentVersion('1.2.4')],
    { 'lean-prompt': [agentVersion('1.3.0')], 'careful-fix': [agentVersion('1.3.1')] },
    (repo) => ({
      pullRequests: [
        {
          number: 31,
          headSha: repo.branches['lean-prompt'].sha,
          headOwner: 'mallory',
          headBranch: 'lean-prompt',
        },
      ],
    }),
  );
});
afterAll(() => h?.close());

// A merge job runs no scenarios: the README's run inputs do not apply to it.
const mergeJob = { repeats: '', engine: '' };

describe('a pull request from a fork (read-only token)', () => {
  let forkReport: string;

  it('warns how to post, still writes the report and summary, and fails on the verdict alone', async () => {
    h.api.forbid.checks = true;
    h.api.forbid.comments = true;
    try {
      const blocked = await h.step('lean-prompt', h.pullRequestEvent(31, 'lean-prompt', true), {
        repeats: 1,
      });
      expect(blocked.code, blocked.stdout + blocked.stderr).toBe(1);
      expect(blocked.outputs.verdict).toBe('BLOCK');
      forkReport = blocked.outputs['report-path'];
      expect(existsSync(forkReport)).toBe(true);
      expect(blocked.summary).toContain('## Stategate: BLOCK');
      const hints = warnings(blocked).map((w) => w.message);
      expect(hints).toContainEqual(
        expect.stringMatching(/could not create the stategate check run: GitHub answered 403.*workflow_run/),
      );
      expect(hints).toContainEqual(
        expect.stringMatching(/could not post the pull request comment: GitHub answered 403.*workflow_run/),
      );

      const passed = await h.step('careful-fix', h.pullRequestEvent(32, 'careful-fix', true), { repeats: 1 });
      expect(passed.code, passed.stdout + passed.stderr).toBe(0);
      expect(passed.outputs.verdict).toBe('PASS');
      expect(warnings(passed).map((w) => w.message)).toEqual([
        expect.stringMatching(/check run: GitHub answered 403/),
        expect.stringMatching(/comment: GitHub answered 403/),
      ]);
    } finally {
      h.api.forbid.checks = false;
      h.api.forbid.comments = false;
    }
    expect(h.api.checkRuns).toHaveLength(0);
    expect(h.api.comments).toHaveLength(0);
  });

  it('posts from a workflow_run job that merges the uploaded report, finding the PR by branch', async () => {
    // What actions/download-artifact puts in the workflow_run job's workspace.
    const ws = join(h.root, 'workflow-run-job');
    mkdirSync(join(ws, 'stategate-report'), { recursive: true });
    cpSync(forkReport, join(ws, 'stategate-report', 'report.json'));
    const event = {
      name: 'workflow_run',
      payload: {
        action: 'completed',
        workflow_run: {
          head_sha: h.repo.branches['lean-prompt'].sha,
          head_branch: 'lean-prompt',
          head_repository: { full_name: 'mallory/refunds', owner: { login: 'mallory' } },
          pull_requests: [],
          conclusion: 'failure',
        },
      },
    };
    const r = await h.step('lean-prompt', event, { ...mergeJob, merge: 'stategate-report/*.json' }, ws);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.outputs.verdict).toBe('BLOCK');
    expect(h.comments(31)).toHaveLength(1);
    expect(h.comments(31)[0].body).toContain('## Stategate: BLOCK');
    const [run] = h.checkRunsOn('lean-prompt');
    // The artifact came from the fork's run: the base repository did not make these results.
    expect(run).toMatchObject({ name: 'stategate (unverified)', conclusion: 'failure', status: 'completed' });
    expect(run.output.title).toMatch(/^BLOCK \(unverified\): /);
    expect(h.comments(31)[0].body).toContain('the triggering workflow run came from mallory/refunds');
  });
});

describe('sharding with a matrix', () => {
  it('runs two slices that post nothing, then a merge job that gates and posts', async () => {
    const requestsBefore = h.api.requests.length;
    const shards: string[] = [];
    for (const i of [1, 2]) {
      const r = await h.step('lean-prompt', h.pullRequestEvent(40, 'lean-prompt'), {
        repeats: 1,
        shard: `${i}/2`,
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain(`Shard ${i}/2: `);
      shards.push(r.outputs['report-path']);
    }
    expect(h.api.requests.length).toBe(requestsBefore);
    const ids = shards.map((p) => JSON.parse(readFileSync(p, 'utf8')).cases.map((c: { id: string }) => c.id));
    expect(ids[0]).toHaveLength(2);
    expect(ids[1]).toHaveLength(2);

    // What actions/download-artifact with a pattern puts in the merge job's workspace.
    const ws = join(h.root, 'merge-job');
    shards.forEach((p, i) => {
      mkdirSync(join(ws, 'reports', `stategate-shard-${i + 1}`), { recursive: true });
      cpSync(p, join(ws, 'reports', `stategate-shard-${i + 1}`, 'report.json'));
    });
    const merged = await h.step(
      'lean-prompt',
      h.pullRequestEvent(40, 'lean-prompt'),
      { ...mergeJob, merge: 'reports/*/report.json' },
      ws,
    );
    expect(merged.code, merged.stdout + merged.stderr).toBe(1);
    expect(merged.outputs.verdict).toBe('BLOCK');
    expect(merged.outputs['new-critical-failure']).toBe('2');
    const total = ['new-critical-failure', 'regressed', 'improved', 'unchanged', 'incomplete'].reduce(
      (n, k) => n + Number(merged.outputs[k]),
      0,
    );
    expect(total).toBe(4);
    expect(JSON.parse(readFileSync(merged.outputs['report-path'], 'utf8')).cases).toHaveLength(4);
    expect(h.comments(40)).toHaveLength(1);
    expect(
      h.api.checkRuns.filter((c) => c.output.title?.startsWith('BLOCK: 2 new critical failures')),
    ).not.toHaveLength(0);
  });

  it('refuses to merge overlapping slices, naming the files', async () => {
    const ws = join(h.root, 'merge-job');
    mkdirSync(join(ws, 'reports', 'stategate-shard-1-again'), { recursive: true });
    cpSync(
      join(ws, 'reports', 'stategate-shard-1', 'report.json'),
      join(ws, 'reports', 'stategate-shard-1-again', 'report.json'),
    );
    const r = await h.step(
      'lean-prompt',
      h.pullRequestEvent(42, 'lean-prompt'),
      { ...mergeJob, merge: 'reports/*/report.json' },
      ws,
    );
    expect(r.code).toBe(1);
    expect(errors(r).map((e) => e.message)).toEqual([
      expect.stringMatching(
        /^merge: shard 1\/2 appears twice: reports 1 and 2 \(report 1 = reports\/stategate-shard-1-again\/report\.json, report 2 = reports\/stategate-shard-1\/report\.json, report 3 = reports\/stategate-shard-2\/report\.json\)$/,
      ),
    ]);
    expect(h.comments(42)).toHaveLength(0);
    expect(h.api.checkRuns.at(-1)).toMatchObject({
      conclusion: 'failure',
      output: { title: 'Stategate could not run' },
    });
  });

  it('refuses a shard together with merge before running anything', async () => {
    const r = await h.step('lean-prompt', h.pullRequestEvent(41, 'lean-prompt'), {
      ...mergeJob,
      shard: '1/2',
      merge: 'reports/*.json',
    });
    expect(r.code).toBe(1);
    expect(errors(r).map((e) => e.message)).toEqual([
      'shard and merge contradict each other: a job either runs a slice or joins them',
    ]);
    expect(h.comments(41)).toHaveLength(0);
  });
});
