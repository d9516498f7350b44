// The action as the runner runs it on a pull request: `node dist/index.js` in a shallow clone of a
// real repository of the demo agent, INPUT_* from action.yml and the README workflow, a pull_request
// payload, and a loopback GitHub API that checks every request against GitHub's OpenAPI description.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentVersion } from './demo-repo.js';
import { errors, Harness, lineOf, type StepRun, TOKEN, warnOnlyGate } from './harness.js';

let h: Harness;

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
  h = await Harness.start([agentVersion('1.2.4')], {
    'lean-prompt': [agentVersion('1.3.0')],
    'careful-fix': [agentVersion('1.3.1')],
    'adopting-gate': [agentVersion('1.3.0'), warnOnlyGate],
    'typo-scenario': [brokenScenario],
  });
});
afterAll(() => h?.close());

describe('the action on a pull request', () => {
  let block: StepRun;

  it('blocks the lean prompt that refunds twice: failed step, failing check with annotations, one comment', async () => {
    block = await h.step('lean-prompt', h.pullRequestEvent(7, 'lean-prompt'));
    expect(block.code, block.stdout + block.stderr).toBe(1);
    expect(block.outputs.verdict).toBe('BLOCK');
    expect(Number(block.outputs['new-critical-failure'])).toBe(2);
    expect(block.outputs['report-path']).toBe(join(block.workspace, '.stategate', 'report.json'));
    const report = JSON.parse(readFileSync(block.outputs['report-path'], 'utf8'));
    expect(report).toMatchObject({ verdict: 'BLOCK', repeats: 3, sides: { base: { sha: h.repo.base.sha } } });
    expect(block.stdout).toContain(
      `base ${h.repo.base.sha} (from the pull_request event, fetched from origin)`,
    );
    expect(errors(block).map((c) => c.message)).toContainEqual(
      expect.stringMatching(/^Stategate BLOCK: 2 new critical failures.* \(fail-on: block\)$/),
    );

    const [run] = h.checkRunsOn('lean-prompt');
    expect(run).toMatchObject({ name: 'stategate', status: 'completed', conclusion: 'failure' });
    expect(run.output.title).toMatch(/^BLOCK: 2 new critical failures/);
    expect(run.output.summary).toContain('refund-timeout-after-mutation');
    expect(run.details_url).toBe('https://github.com/acme/refunds/actions/runs/4242');
    const paths = new Set(run.annotations.map((a) => a.path));
    expect(paths).toContain('scenarios/refund-timeout-after-mutation.yaml');
    expect(paths).toContain('scenarios/refund-success-without-effect.yaml');
    for (const a of run.annotations.filter((x) => x.annotation_level === 'failure')) {
      const expectation = /expectation (\S+)/.exec(a.title)![1];
      expect(a.start_line, a.title).toBe(lineOf(join(block.workspace, a.path), expectation));
    }

    const comments = h.comments(7);
    expect(comments).toHaveLength(1);
    expect(comments[0].user.login).toBe('github-actions[bot]');
    expect(comments[0].body.startsWith('<!-- stategate:comment -->\n## Stategate: BLOCK')).toBe(true);
    expect(comments[0].body).toContain('refund-timeout-after-mutation');
    expect(block.summary).toContain('## Stategate: BLOCK');
  });

  it('never prints the token nor writes it into the report files', () => {
    for (const f of ['report.json', 'report.md', 'report.html', 'episodes.jsonl'].map((n) =>
      join(block.workspace, '.stategate', n),
    )) {
      expect(existsSync(f), f).toBe(true);
      expect(readFileSync(f, 'utf8')).not.toContain(TOKEN);
    }
    const printed = block.stdout.split('\n').filter((l) => !l.startsWith('::add-mask::'));
    expect(printed.join('\n')).not.toContain(TOKEN);
    expect(h.api.requests.every((q) => q.token === TOKEN)).toBe(true);
  });

  it('passes the fix pushed to the same PR and edits the comment in place', async () => {
    const r = await h.step('careful-fix', h.pullRequestEvent(7, 'careful-fix'), { repeats: 1 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.outputs.verdict).toBe('PASS');
    const [run] = h.checkRunsOn('careful-fix');
    expect(run).toMatchObject({ status: 'completed', conclusion: 'success', annotations: [] });
    expect(run.output.title).toMatch(/^PASS: /);
    const comments = h.comments(7);
    expect(comments).toHaveLength(1);
    expect(comments[0].body).toContain('## Stategate: PASS');
    // The earlier BLOCK is gone from the edited comment: no verdict, no blocking section.
    expect(comments[0].body).not.toContain('## Stategate: BLOCK');
    expect(comments[0].body).not.toContain('### Blocking');
    expect(h.api.requests.filter((q) => q.operationId === 'issues/update-comment')).toHaveLength(1);
  });

  it("judges a head that relaxes its own gate by the base's gate, and names the relaxation first", async () => {
    const r = await h.step('adopting-gate', h.pullRequestEvent(10, 'adopting-gate'), { repeats: 1 });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.outputs.verdict).toBe('BLOCK');
    const report = JSON.parse(readFileSync(r.outputs['report-path'], 'utf8'));
    expect(report.policy_from).toEqual({ side: 'base', reason: "the base's stategate.yml" });
    expect(report.gate.block).toEqual(['new-critical-failure']);
    const [run] = h.checkRunsOn('adopting-gate');
    expect(run.conclusion).toBe('failure');
    expect(run.output.title).toMatch(/^BLOCK: suite weakened, \d new critical failures?/);
    const [comment] = h.comments(10);
    const body = comment.body as string;
    expect(body).toContain('- warns: suite weakened: gate.block no longer lists new-critical-failure');
    const changes = body.indexOf('### Suite changes against the base: 2, 1 weakens the suite');
    expect(changes).toBeGreaterThan(0);
    expect(changes).toBeLessThan(body.indexOf('### Blocking'));
    expect(run.output.summary).toContain('### Suite changes against the base');
  });

  it('fails the step on WARN with fail-on: warn, and the check is neutral; junit and comment: false', async () => {
    const r = await h.step('adopting-gate', h.pullRequestEvent(9, 'adopting-gate'), {
      repeats: 1,
      // The head's own warn-only gate applies only when the workflow asks for the head's policy.
      'policy-from': 'head',
      'fail-on': 'warn',
      comment: 'false',
      junit: 'stategate-junit.xml',
    });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.outputs.verdict).toBe('WARN');
    const run = h.checkRunsOn('adopting-gate').at(-1)!;
    expect(run.conclusion).toBe('neutral');
    expect(run.output.title).toMatch(/^WARN: /);
    expect(run.annotations.length).toBeGreaterThan(0);
    expect(run.annotations.every((a) => a.annotation_level === 'warning')).toBe(true);
    expect(h.comments(9)).toHaveLength(0);
    expect(r.stdout).toContain('comment: false, so no pull request comment.');
    const junit = readFileSync(join(r.workspace, 'stategate-junit.xml'), 'utf8');
    expect(junit).toMatch(/^<\?xml/);
    expect(junit).toContain('refund-timeout-after-mutation');
  });

  it('runs the head alone on a push without base-ref, and says so', async () => {
    const push = { name: 'push', payload: { ref: 'refs/heads/main', after: h.repo.base.sha, commits: [] } };
    const r = await h.step('main', push, { repeats: 1 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.commands.filter((c) => c.command === 'notice').map((c) => c.message)).toEqual([
      expect.stringMatching(/^No base: .* the head runs alone/),
    ]);
    const report = JSON.parse(readFileSync(r.outputs['report-path'], 'utf8'));
    expect(report.sides.base).toBeNull();
    const run = h.api.checkRuns.find((c) => c.head_sha === h.repo.base.sha)!;
    expect(run.output.title).toMatch(/\(head only, no base\)$/);
    expect(r.stdout).toContain('No pull request for this run: no comment posted.');
  });

  it('annotates a broken scenario file at its lines and fails the step', async () => {
    const r = await h.step('typo-scenario', h.pullRequestEvent(11, 'typo-scenario'), { repeats: 1 });
    expect(r.code).toBe(1);
    const onFile = errors(r).filter((c) => c.properties.file === 'scenarios/refund-typo.yaml');
    expect(onFile.find((c) => c.properties.line === '6')?.message).toMatch(/timeout_after_mutaton/);
    expect(onFile.find((c) => c.properties.line === '10')?.message).toMatch(/equalz/);
    expect(r.stdout).toMatch(/^::error file=scenarios\/refund-typo\.yaml,line=6,col=\d+::/m);
    const [run] = h.checkRunsOn('typo-scenario');
    expect(run.conclusion).toBe('failure');
    expect(run.output.title).toMatch(/^Configuration error: \d+ problems?$/);
    expect(run.annotations.map((a) => a.path)).toContain('scenarios/refund-typo.yaml');
    expect(h.comments(11)).toHaveLength(0);
    expect(r.outputs.verdict).toBeUndefined();
  });
});
