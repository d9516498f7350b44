// Attack: a fork's pull_request run uploads its report.json; the base repository's workflow_run job
// posts it with the base's token. The fork edits the artifact: the verdict and the gate say PASS (and,
// more carefully, the counts too). merge recomputes the verdict from the cases with the merging
// checkout's gate, refuses classes the counts contradict, and a report from a run the base does not
// control is "unverified" and neutral at best: never a success check, never a plain PASS comment.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentVersion } from '../action/demo-repo.js';
import { Harness } from '../action/harness.js';
import type { StepOptions } from '../action/runner.js';
import {
  forgeCounts,
  forgeVerdict,
  genuineBlock,
  genuinePass,
  readJson,
  removeScratch,
  scratch,
  stategate,
  writeReport,
} from './reports.js';

afterAll(removeScratch);

describe('stategate merge of an edited report', () => {
  it('ignores an edited verdict, gate and counts: the cases still BLOCK under the built-in policy', () => {
    const dir = scratch('fork-cli');
    writeReport(dir, 'artifact/report.json', forgeVerdict(genuineBlock()));
    const r = stategate(dir, ['merge', 'artifact/report.json', '--out', 'out']);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stdout).toMatch(
      /^Stategate: BLOCK\n {2}blocks: 1 new-critical-failure \(refund-timeout-after-mutation\)/,
    );
    const merged = readJson(join(dir, 'out', 'report.json'));
    expect(merged.verdict).toBe('BLOCK');
    expect(merged.gate).toEqual({
      block: ['new-critical-failure', 'incomplete'],
      warn: ['regressed', 'flaky'],
    });
    expect(merged.counts).toMatchObject({ 'new-critical-failure': 1, regressed: 1, unchanged: 2 });
    expect(r.stderr).toContain('gating with the built-in default policy');
  });

  it("gates with the merging checkout's stategate.yml, not the gate the report carries", () => {
    const dir = scratch('fork-cli-policy');
    const report = forgeVerdict(genuineBlock());
    // Only the regression is left: the built-in gate would warn; this checkout's gate blocks it.
    report.cases = report.cases.filter((c) => c.id !== 'refund-timeout-after-mutation');
    writeReport(dir, 'artifact/report.json', report);
    writeFileSync(
      join(dir, 'stategate.yml'),
      'version: 1\ngate:\n  block: [new-critical-failure, regressed]\n  warn: []\n',
    );
    const r = stategate(dir, ['merge', 'artifact/report.json', '--out', 'out']);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stdout).toMatch(/^Stategate: BLOCK\n {2}blocks: 1 regressed \(email-after-refund\)/);
    expect(r.stderr).toContain('gating with the gate of stategate.yml');
    writeFileSync(
      join(dir, 'stategate.yml'),
      'version: 1\ngate:\n  block: [new-critical-failure, regresed]\n',
    );
    const broken = stategate(dir, ['merge', 'artifact/report.json', '--out', 'out']);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^stategate\.yml:3:\d+: .*regresed/);
  });

  it('refuses a class edited to match the forged verdict', () => {
    const dir = scratch('fork-cli-class');
    const report = forgeVerdict(genuineBlock());
    for (const c of report.cases) c.class = 'unchanged';
    writeReport(dir, 'artifact/report.json', report);
    const r = stategate(dir, ['merge', 'artifact/report.json', '--out', 'out']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "stategate: artifact/report.json: cases[0].class: says 'unchanged', but its own counts make it 'regressed' (Expectation email-sent failed in 1 of 5 head repeats and passed in all 5 base repeats.)\n",
    );
  });

  it('--unverified marks a consistent forgery: PASS, but labelled unverified', () => {
    const dir = scratch('fork-cli-unverified');
    writeReport(dir, 'artifact/report.json', forgeCounts(genuineBlock()));
    const r = stategate(dir, ['merge', 'artifact/report.json', '--out', 'out', '--unverified']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^Stategate: PASS \(unverified\)\n {2}Unverified: these results come from a run/,
    );
    expect(readJson(join(dir, 'out', 'report.json')).unverified).toEqual({
      reason: 'the reports were passed with --unverified',
    });
  });
});

describe('the action posting a fork artifact from workflow_run', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start(
      [agentVersion('1.2.4')],
      { 'lean-prompt': [agentVersion('1.3.0')], 'careful-fix': [agentVersion('1.3.1')] },
      (repo) => ({
        pullRequests: [
          {
            number: 61,
            headSha: repo.branches['lean-prompt'].sha,
            headOwner: 'mallory',
            headBranch: 'lean-prompt',
          },
          {
            number: 62,
            headSha: repo.branches['careful-fix'].sha,
            headOwner: 'acme',
            headBranch: 'careful-fix',
          },
        ],
      }),
    );
  });
  afterAll(() => h?.close());

  const workflowRun = (branch: string, headRepository: string): StepOptions['event'] => ({
    name: 'workflow_run',
    payload: {
      action: 'completed',
      workflow_run: {
        head_sha: h.repo.branches[branch].sha,
        head_branch: branch,
        head_repository: { full_name: headRepository, owner: { login: headRepository.split('/')[0] } },
        pull_requests: [],
        conclusion: 'success',
      },
      repository: { full_name: 'acme/refunds' },
    },
  });

  /** The README's posting job: the artifact downloaded into stategate-report/, then merge. */
  async function post(
    branch: string,
    report: unknown,
    headRepository: string,
    extra: Record<string, string> = {},
  ) {
    const ws = scratch('post-job');
    writeReport(ws, 'stategate-report/report.json', report);
    return h.step(
      branch,
      workflowRun(branch, headRepository),
      { repeats: '', engine: '', merge: 'stategate-report/*.json', 'fail-on': 'never', ...extra },
      ws,
    );
  }

  it('a consistent forged PASS from a fork is neutral and says unverified, never success', async () => {
    const r = await post('lean-prompt', forgeCounts(genuineBlock()), 'mallory/refunds');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.outputs.verdict).toBe('PASS');
    const [run] = h.checkRunsOn('lean-prompt');
    // GitHub counts a neutral check as passing a required one: this one never bears the required name.
    expect(run).toMatchObject({ name: 'stategate (unverified)', status: 'completed', conclusion: 'neutral' });
    expect(run.output.title).toBe('PASS (unverified): 4 unchanged');
    expect(run.output.summary).toContain('## Stategate: PASS (unverified)');
    const [comment] = h.comments(61);
    expect(comment.body).toContain('## Stategate: PASS (unverified)');
    expect(comment.body).toContain(
      'Unverified: these results come from a run this repository does not control',
    );
    expect(comment.body).toContain('the triggering workflow run came from mallory/refunds, not acme/refunds');
    expect(comment.body).not.toMatch(/## Stategate: PASS\n/);
    expect(r.summary).toContain('## Stategate: PASS (unverified)');
  });

  it('an edited verdict on a real BLOCK still fails, and says unverified', async () => {
    const r = await post('lean-prompt', forgeVerdict(genuineBlock()), 'mallory/refunds');
    expect(r.outputs.verdict).toBe('BLOCK');
    const run = h.checkRunsOn('lean-prompt').at(-1)!;
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(run.output.title).toMatch(
      /^BLOCK \(unverified\): 1 new critical failure, 1 regressed, 2 unchanged$/,
    );
  });

  it('a run of the base repository itself concludes success on PASS; reports-from: untrusted never does', async () => {
    const trusted = await post('careful-fix', genuinePass(), 'acme/refunds');
    expect(trusted.code, trusted.stdout + trusted.stderr).toBe(0);
    expect(h.checkRunsOn('careful-fix').at(-1)).toMatchObject({ name: 'stategate', conclusion: 'success' });
    expect(h.checkRunsOn('careful-fix').at(-1)!.output.title).toBe('PASS: 2 unchanged');

    const untrusted = await post('careful-fix', genuinePass(), 'acme/refunds', {
      'reports-from': 'untrusted',
    });
    expect(untrusted.code).toBe(0);
    expect(h.checkRunsOn('careful-fix').at(-1)).toMatchObject({
      name: 'stategate (unverified)',
      conclusion: 'neutral',
    });
    expect(h.checkRunsOn('careful-fix').at(-1)!.output.title).toBe('PASS (unverified): 2 unchanged');
  });

  it('a payload that does not name the triggering repository is not trusted', async () => {
    const ws = scratch('post-job-anonymous');
    writeReport(ws, 'stategate-report/report.json', genuinePass());
    const event = workflowRun('careful-fix', 'acme/refunds');
    delete (event.payload as { workflow_run: { head_repository?: unknown } }).workflow_run.head_repository;
    await h.step(
      'careful-fix',
      event,
      { repeats: '', engine: '', merge: 'stategate-report/*.json', 'fail-on': 'never' },
      ws,
    );
    const run = h.api.checkRuns.at(-1)!;
    expect(run).toMatchObject({ conclusion: 'neutral' });
    expect(run.output.summary).toContain('does not say which repository the triggering run came from');
  });

  it('never concluded success for a report from a fork, nor posted it as the required check', () => {
    const forkRuns = h.checkRunsOn('lean-prompt');
    expect(forkRuns.length).toBeGreaterThan(0);
    expect(forkRuns.filter((c) => c.conclusion === 'success')).toEqual([]);
    expect(forkRuns.filter((c) => c.name === 'stategate')).toEqual([]);
  });
});
