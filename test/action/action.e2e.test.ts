// The action as the runner runs it: `node dist/index.js` in a shallow clone of a real repository of
// the demo agent, INPUT_* from action.yml and the README workflow, a pull_request payload, and a
// loopback GitHub API that checks every request against GitHub's OpenAPI description.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type GitHubApi, startGitHubApi } from '../helpers/github-api.js';
import { agentVersion, checkout, type DemoRepo, databaseUrlFromEnv, makeDemoRepo } from './demo-repo.js';
import { PROJECT, runStep, type StepOptions, type StepResult } from './runner.js';

const DATABASE_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TOKEN = `ghs_${'T0k3n'.repeat(7)}x`;
const OWNER = 'acme';
const REPO = 'refunds';

// The README's workflow, read from the fixture the README section is checked against.
const workflow = parse(readFileSync(join(PROJECT, 'test/action/fixtures/workflow.yml'), 'utf8'));
const readmeStep = (
  workflow.jobs.gate.steps as { uses: string; with?: Record<string, string>; env?: Record<string, string> }[]
).find((s) => /\/stategate@/.test(s.uses))!;

let root: string;
let repo: DemoRepo;
let api: GitHubApi;
let workspaces = 0;

// The gate a team uses while adopting: every class only warns.
const warnOnly = (dir: string) => {
  const path = join(dir, 'stategate.yml');
  const text = readFileSync(path, 'utf8').replace(
    /gate:\n(?: {2}.*\n)+/,
    'gate:\n  block: []\n  warn: [new-critical-failure, regressed, incomplete, flaky]\n',
  );
  writeFileSync(path, text);
};
const brokenScenario = (dir: string) =>
  writeFileSync(
    join(dir, 'scenarios/refund-typo.yaml'),
    [
      'id: refund-typo',
      'input:',
      '  message: "Refund ORD-1101 please"',
      'faults:',
      '  - tool: refund_payment',
      '    fault: timeout_after_mutaton',
      'expect:',
      '  - id: refunded',
      '    query: SELECT refund_count FROM orders',
      '    equalz: 1',
      '',
    ].join('\n'),
  );

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'stategate-action-'));
  repo = makeDemoRepo(root, [agentVersion('1.2.4'), databaseUrlFromEnv], {
    'lean-prompt': [agentVersion('1.3.0')],
    'careful-fix': [agentVersion('1.3.1')],
    'adopting-gate': [agentVersion('1.3.0'), warnOnly],
    'typo-scenario': [brokenScenario],
  });
  api = await startGitHubApi({
    owner: OWNER,
    repo: REPO,
    pullRequests: [
      {
        number: 31,
        headSha: repo.branches['lean-prompt'].sha,
        headOwner: 'mallory',
        headBranch: 'lean-prompt',
      },
    ],
  });
});

afterAll(async () => {
  await api?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

function pullRequestEvent(number: number, branch: string, fork = false) {
  const head = repo.branches[branch];
  const headRepo = fork ? 'mallory/refunds' : `${OWNER}/${REPO}`;
  return {
    name: 'pull_request',
    payload: {
      action: 'synchronize',
      number,
      pull_request: {
        number,
        state: 'open',
        title: `PR ${branch}`,
        head: { ref: branch, sha: head.sha, repo: { full_name: headRepo, fork } },
        base: { ref: 'main', sha: repo.base.sha, repo: { full_name: `${OWNER}/${REPO}`, fork: false } },
      },
      repository: { full_name: `${OWNER}/${REPO}`, name: REPO, owner: { login: OWNER } },
      sender: { login: fork ? 'mallory' : 'dev' },
    },
  };
}

/** Runs the README's step on a fresh shallow checkout of `branch`, with extra `with:` values. */
async function step(
  branch: string,
  event: StepOptions['event'],
  extra: Record<string, string | number> = {},
  workspace?: string,
): Promise<StepResult & { workspace: string }> {
  const ws = workspace ?? checkout(repo, branch, join(root, `ws-${++workspaces}`));
  const env = { ...readmeStep.env, STATEGATE_DATABASE_URL: DATABASE_URL };
  const result = await runStep({
    workspace: ws,
    with: { ...readmeStep.with, ...extra },
    env,
    event,
    repository: `${OWNER}/${REPO}`,
    sha: repo.branches[branch]?.sha ?? repo.base.sha,
    apiUrl: api.url,
    token: TOKEN,
    runnerTemp: join(root, 'runner'),
  });
  expect(api.violations).toEqual([]);
  return { ...result, workspace: ws };
}

const errors = (r: StepResult) => r.commands.filter((c) => c.command === 'error');
const warnings = (r: StepResult) => r.commands.filter((c) => c.command === 'warning');
const prComments = (number: number) => api.comments.filter((c) => c.issue_number === number);
const checkRunsOn = (sha: string) => api.checkRuns.filter((c) => c.head_sha === sha);

/** The 1-based line of `- id: <id>` (or `id: <id>`) in a file. */
function lineOf(file: string, id: string): number {
  const lines = readFileSync(file, 'utf8').split('\n');
  return lines.findIndex((l) => new RegExp(`^\\s*(?:- )?id: ${id}\\s*$`).test(l)) + 1;
}

describe('the action on a pull request', () => {
  let blockRun: StepResult & { workspace: string };

  it('blocks the lean prompt that refunds twice: failed step, failing check with annotations, one comment', async () => {
    blockRun = await step('lean-prompt', pullRequestEvent(7, 'lean-prompt'));
    const r = blockRun;
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.outputs.verdict).toBe('BLOCK');
    expect(Number(r.outputs['new-critical-failure'])).toBeGreaterThan(0);
    expect(r.outputs['report-path']).toBe(join(r.workspace, '.stategate', 'report.json'));
    const report = JSON.parse(readFileSync(r.outputs['report-path'], 'utf8'));
    expect(report.verdict).toBe('BLOCK');
    expect(report.sides.base.sha).toBe(repo.base.sha);
    expect(report.repeats).toBe(3);
    expect(r.stdout).toContain(`base ${repo.base.sha} (from the pull_request event, fetched from origin)`);
    expect(errors(r).map((c) => c.message)).toContainEqual(
      expect.stringMatching(/^Stategate BLOCK: \d+ new critical failures?/),
    );

    const [run] = checkRunsOn(repo.branches['lean-prompt'].sha);
    expect(run).toMatchObject({ name: 'stategate', status: 'completed', conclusion: 'failure' });
    expect(run.output.title).toMatch(/^BLOCK: \d+ new critical failures?/);
    expect(run.output.summary).toContain('refund-timeout-after-mutation');
    expect(run.details_url).toBe(`https://github.com/${OWNER}/${REPO}/actions/runs/4242`);
    const onTimeout = run.annotations.filter(
      (a) => a.path === 'scenarios/refund-timeout-after-mutation.yaml',
    );
    expect(onTimeout.length).toBeGreaterThan(0);
    for (const a of onTimeout) {
      expect(a.annotation_level).toBe('failure');
      const expectation = /expectation (\S+)/.exec(a.title)![1];
      expect(a.start_line).toBe(lineOf(join(r.workspace, a.path), expectation));
    }

    const comments = prComments(7);
    expect(comments).toHaveLength(1);
    expect(comments[0].user.login).toBe('github-actions[bot]');
    expect(comments[0].body.startsWith('<!-- stategate:comment -->')).toBe(true);
    expect(comments[0].body).toContain('BLOCK');
    expect(comments[0].body).toContain('refund-timeout-after-mutation');
    expect(r.summary).toContain('BLOCK');
    expect(r.summary).toContain('refund-timeout-after-mutation');
    writeFileSync(join(root, 'block-comment.md'), comments[0].body);
  });

  it('never hands the token to the agent or writes it into the report', () => {
    const files = ['report.json', 'report.md', 'episodes.jsonl'].map((f) =>
      join(blockRun.workspace, '.stategate', f),
    );
    for (const f of files.filter(existsSync)) expect(readFileSync(f, 'utf8')).not.toContain(TOKEN);
    const printed = blockRun.stdout.split('\n').filter((l) => !l.startsWith('::add-mask::'));
    expect(printed.join('\n')).not.toContain(TOKEN);
    expect(api.requests.every((q) => q.token === TOKEN)).toBe(true);
  });

  it('passes the fix pushed to the same PR and edits the comment in place', async () => {
    const r = await step('careful-fix', pullRequestEvent(7, 'careful-fix'), { repeats: 1 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.outputs.verdict).toBe('PASS');
    const [run] = checkRunsOn(repo.branches['careful-fix'].sha);
    expect(run).toMatchObject({ status: 'completed', conclusion: 'success' });
    expect(run.output.title).toMatch(/^PASS: /);
    expect(run.annotations).toEqual([]);
    const comments = prComments(7);
    expect(comments).toHaveLength(1);
    expect(comments[0].body).toContain('PASS');
    expect(comments[0].body).not.toContain('BLOCK');
    expect(api.requests.filter((q) => q.operationId === 'issues/update-comment')).toHaveLength(1);
  });

  it('fails the step on WARN with fail-on: warn, and the check is neutral', async () => {
    const r = await step('adopting-gate', pullRequestEvent(9, 'adopting-gate'), {
      repeats: 1,
      'fail-on': 'warn',
    });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.outputs.verdict).toBe('WARN');
    const [run] = checkRunsOn(repo.branches['adopting-gate'].sha);
    expect(run.conclusion).toBe('neutral');
    expect(run.output.title).toMatch(/^WARN: /);
    expect(run.annotations.length).toBeGreaterThan(0);
    expect(run.annotations.every((a) => a.annotation_level === 'warning')).toBe(true);
    expect(prComments(9)[0].body).toContain('WARN');
  });

  it('annotates a broken scenario file at its lines and fails the step', async () => {
    const r = await step('typo-scenario', pullRequestEvent(11, 'typo-scenario'), { repeats: 1 });
    expect(r.code).toBe(1);
    const onFile = errors(r).filter((c) => c.properties.file === 'scenarios/refund-typo.yaml');
    expect(onFile.map((c) => Number(c.properties.line)).sort()).toEqual(expect.arrayContaining([6, 10]));
    expect(onFile.find((c) => c.properties.line === '6')!.message).toMatch(/timeout_after_mutaton/);
    expect(r.stdout).toMatch(/^::error file=scenarios\/refund-typo\.yaml,line=6,col=\d+::/m);
    const [run] = checkRunsOn(repo.branches['typo-scenario'].sha);
    expect(run).toMatchObject({ conclusion: 'failure' });
    expect(run.output.title).toMatch(/^Configuration error: \d+ problems?$/);
    expect(run.annotations.map((a) => a.path)).toContain('scenarios/refund-typo.yaml');
    expect(prComments(11)).toHaveLength(0);
  });
});

describe('a pull request from a fork (read-only token)', () => {
  let forkReport: string;

  it('warns how to post, still writes the report and summary, and fails on the verdict alone', async () => {
    api.forbid.checks = true;
    api.forbid.comments = true;
    try {
      const blocked = await step('lean-prompt', pullRequestEvent(31, 'lean-prompt', true), { repeats: 1 });
      expect(blocked.code, blocked.stdout + blocked.stderr).toBe(1);
      expect(blocked.outputs.verdict).toBe('BLOCK');
      forkReport = blocked.outputs['report-path'];
      expect(existsSync(forkReport)).toBe(true);
      expect(blocked.summary).toContain('BLOCK');
      const hints = warnings(blocked).map((w) => w.message);
      expect(hints).toContainEqual(
        expect.stringMatching(/could not create the stategate check run: GitHub answered 403.*workflow_run/),
      );
      expect(hints).toContainEqual(
        expect.stringMatching(/could not post the pull request comment: GitHub answered 403.*workflow_run/),
      );

      const passed = await step('careful-fix', pullRequestEvent(32, 'careful-fix', true), { repeats: 1 });
      expect(passed.code, passed.stdout + passed.stderr).toBe(0);
      expect(passed.outputs.verdict).toBe('PASS');
      expect(warnings(passed)).toHaveLength(2);
    } finally {
      api.forbid.checks = false;
      api.forbid.comments = false;
    }
    expect(prComments(31)).toHaveLength(0);
    expect(checkRunsOn(repo.branches['lean-prompt'].sha)).toHaveLength(1);
  });

  it('posts from a workflow_run job that merges the uploaded report', async () => {
    const ws = join(root, 'post-from-workflow-run');
    mkdirSync(join(ws, 'stategate-report'), { recursive: true });
    cpSync(forkReport, join(ws, 'stategate-report', 'report.json'));
    const event = {
      name: 'workflow_run',
      payload: {
        action: 'completed',
        workflow_run: {
          head_sha: repo.branches['lean-prompt'].sha,
          head_branch: 'lean-prompt',
          head_repository: { full_name: 'mallory/refunds', owner: { login: 'mallory' } },
          pull_requests: [],
          conclusion: 'failure',
        },
      },
    };
    const r = await step(
      'lean-prompt',
      event,
      { merge: 'stategate-report/*.json', repeats: '', engine: '' },
      ws,
    );
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.outputs.verdict).toBe('BLOCK');
    const comments = prComments(31);
    expect(comments).toHaveLength(1);
    expect(comments[0].body).toContain('BLOCK');
    const runs = checkRunsOn(repo.branches['lean-prompt'].sha);
    expect(runs).toHaveLength(2);
    expect(runs[1].conclusion).toBe('failure');
  });
});

describe('sharding with a matrix', () => {
  it('runs two slices that post nothing, then a merge job that gates and posts', async () => {
    const requestsBefore = api.requests.length;
    const shards = [];
    for (const i of [1, 2]) {
      const r = await step('lean-prompt', pullRequestEvent(40, 'lean-prompt'), {
        repeats: 1,
        shard: `${i}/2`,
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(['PASS', 'WARN', 'BLOCK']).toContain(r.outputs.verdict);
      shards.push(r.outputs['report-path']);
    }
    expect(api.requests.length).toBe(requestsBefore);
    const cases = shards.map((p) => JSON.parse(readFileSync(p, 'utf8')).cases.length);
    expect(cases[0] + cases[1]).toBe(10);

    // What actions/download-artifact puts in the merge job's workspace.
    const ws = join(root, 'merge-job');
    shards.forEach((p, i) => {
      mkdirSync(join(ws, 'reports', `shard-${i + 1}`), { recursive: true });
      cpSync(p, join(ws, 'reports', `shard-${i + 1}`, 'report.json'));
    });
    const merged = await step(
      'lean-prompt',
      pullRequestEvent(40, 'lean-prompt'),
      { merge: 'reports/*/report.json', repeats: '', engine: '' },
      ws,
    );
    expect(merged.code, merged.stdout + merged.stderr).toBe(1);
    expect(merged.outputs.verdict).toBe('BLOCK');
    const counts = ['new-critical-failure', 'regressed', 'improved', 'unchanged', 'incomplete'].map((k) =>
      Number(merged.outputs[k]),
    );
    expect(counts.reduce((a, b) => a + b, 0)).toBe(10);
    expect(prComments(40)).toHaveLength(1);
    expect(JSON.parse(readFileSync(merged.outputs['report-path'], 'utf8')).cases).toHaveLength(10);
  });

  it('refuses a shard together with merge before running anything', async () => {
    const r = await step('lean-prompt', pullRequestEvent(41, 'lean-prompt'), {
      shard: '1/2',
      merge: 'reports/*.json',
      repeats: '',
    });
    expect(r.code).toBe(1);
    expect(
      errors(r)
        .map((e) => e.message)
        .join('\n'),
    ).toMatch(/shard and merge contradict each other/);
    expect(prComments(41)).toHaveLength(0);
  });
});
