// The check run over real HTTP against the loopback GitHub API (every request checked against
// GitHub's OpenAPI description).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckAnnotation } from '../../src/action/annotations.js';
import {
  checkConclusionOf,
  checkTitle,
  completeCheckRun,
  startCheckRun,
} from '../../src/action/check-run.js';
import { createGitHub } from '../../src/action/github.js';
import type { Report } from '../../src/model/report.js';
import { type GitHubApi, startGitHubApi } from '../helpers/github-api.js';
import { sampleReport } from '../report/fixtures.js';

let api: GitHubApi;
const target = { owner: 'acme', repo: 'refunds', headSha: 'c0ffee'.padEnd(40, '0') };
const gh = () => createGitHub('ghs_check', api.url, () => {});

beforeEach(async () => {
  api = await startGitHubApi({ owner: 'acme', repo: 'refunds' });
});
afterEach(async () => {
  expect(api.violations).toEqual([]);
  await api.close();
});

function annotations(n: number): CheckAnnotation[] {
  return Array.from({ length: n }, (_, i) => ({
    path: `scenarios/case-${i}.yaml`,
    start_line: i + 1,
    end_line: i + 1,
    annotation_level: 'failure',
    title: `case-${i}`,
    message: `expectation ${i} broke`,
  }));
}

describe('check run', () => {
  it('starts in_progress on the head commit, then completes with conclusion, title and summary', async () => {
    const id = await startCheckRun(await gh(), target, 'https://github.com/acme/refunds/actions/runs/7');
    expect(api.checkRuns).toHaveLength(1);
    expect(api.checkRuns[0]).toMatchObject({
      id,
      name: 'stategate',
      head_sha: target.headSha,
      status: 'in_progress',
    });
    const done = await completeCheckRun(await gh(), target, id, {
      conclusion: 'failure',
      title: 'BLOCK: 1 new critical failure',
      summary: '## Stategate: BLOCK',
      annotations: annotations(3),
    });
    expect(done.url).toBe(`https://github.com/acme/refunds/runs/${id}`);
    const run = api.checkRuns[0];
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(run.output.title).toBe('BLOCK: 1 new critical failure');
    expect(run.annotations.map((a) => a.path)).toEqual([
      'scenarios/case-0.yaml',
      'scenarios/case-1.yaml',
      'scenarios/case-2.yaml',
    ]);
  });

  it('concludes an interrupted run cancelled, never neutral, whatever it had graded', async () => {
    for (const verdict of ['PASS', 'WARN', 'BLOCK'] as const) {
      expect(checkConclusionOf({ verdict, interrupted: true })).toBe('cancelled');
    }
    const interrupted = sampleReport({ interrupted: true });
    expect(interrupted.verdict).not.toBe('PASS');
    const id = await startCheckRun(await gh(), target);
    await completeCheckRun(await gh(), target, id, {
      conclusion: checkConclusionOf(interrupted),
      title: checkTitle(interrupted),
      summary: '## Stategate: interrupted',
      annotations: [],
    });
    expect(api.checkRuns.at(-1)).toMatchObject({ status: 'completed', conclusion: 'cancelled' });
  });

  it('sends 120 annotations as 50 + 50 + 20 and trims a long summary below 65,535 characters', async () => {
    const id = await startCheckRun(await gh(), target);
    const summary = Array.from({ length: 9000 }, (_, i) => `| case-${i} | unchanged |`).join('\n');
    expect(summary.length).toBeGreaterThan(65_535);
    await completeCheckRun(await gh(), target, id, {
      conclusion: 'neutral',
      title: 'WARN',
      summary,
      annotations: annotations(120),
    });
    const run = api.checkRuns[0];
    expect(run.updates).toBe(3);
    expect(run.annotations).toHaveLength(120);
    expect(new Set(run.annotations.map((a) => a.path)).size).toBe(120);
    expect(run.conclusion).toBe('neutral');
    expect(run.output.summary!.length).toBeLessThan(65_535);
    expect(run.output.summary).toMatch(/trimmed/);
    const patches = api.requests.filter((r) => r.operationId === 'checks/update');
    expect(
      patches.map((r) => (r.body as { output: { annotations: unknown[] } }).output.annotations.length),
    ).toEqual([50, 50, 20]);
  });

  it('creates the run completed when it was never started', async () => {
    await completeCheckRun(await gh(), target, null, {
      conclusion: 'success',
      title: 'PASS',
      summary: 'ok',
      annotations: [],
    });
    expect(api.checkRuns).toHaveLength(1);
    expect(api.checkRuns[0]).toMatchObject({
      status: 'completed',
      conclusion: 'success',
      head_sha: target.headSha,
    });
  });

  it('counts the classes present in the title', () => {
    const report = {
      verdict: 'BLOCK',
      sides: { base: { ref: 'b', sha: 'b' }, head: { ref: 'h', sha: 'h' } },
      counts: { 'new-critical-failure': 1, regressed: 0, improved: 2, unchanged: 1, incomplete: 0 },
    } as unknown as Report;
    expect(checkTitle(report)).toBe('BLOCK: 1 new critical failure, 2 improved, 1 unchanged');
    // The head alone: its cases pass or fail, never "unchanged" against a base that did not run.
    const side = (passes: number) => ({ runs: 3, passes, expectations: {} });
    const headOnly = {
      verdict: 'BLOCK',
      sides: { base: null, head: { ref: 'h', sha: 'h' } },
      counts: { 'new-critical-failure': 1, regressed: 1, improved: 0, unchanged: 2, incomplete: 0 },
      cases: [
        { id: 'a', class: 'new-critical-failure', base: null, head: side(0) },
        { id: 'b', class: 'regressed', base: null, head: side(2) },
        { id: 'c', class: 'unchanged', base: null, head: side(3) },
        { id: 'd', class: 'unchanged', base: null, head: side(3) },
      ],
    } as unknown as Report;
    expect(checkTitle(headOnly)).toBe('BLOCK: 2 fail, 2 pass (head only, no base)');
  });
});
