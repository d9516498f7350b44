// A report of a filtered local run (`stategate compare --scenario ...`) handed to the action's merge
// job, as a shard report would be: the check is never `success`, with the report's `filter` field
// or without it. The action itself always runs the whole suite; only the CLI filters.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stategate } from '../helpers/stategate-cli.js';
import { agentVersion, checkout, git } from './demo-repo.js';
import { Harness } from './harness.js';

let h: Harness;
let filtered: string;

beforeAll(async () => {
  h = await Harness.start([agentVersion('1.2.4')], { 'careful-fix': [agentVersion('1.3.1')] }, (repo) => ({
    pullRequests: [
      { number: 52, headSha: repo.branches['careful-fix'].sha, headOwner: 'acme', headBranch: 'careful-fix' },
    ],
  }));
  // The developer's machine: a full clone of the PR branch, one scenario compared against main.
  const dev = checkout(h.repo, 'careful-fix', join(h.root, 'dev'));
  git(dev, 'fetch', '-q', '--unshallow');
  git(dev, 'fetch', '-q', 'origin', 'main');
  const res = stategate(dev, [
    'compare',
    '--base',
    h.repo.base.sha,
    '--head',
    '.',
    '--scenario',
    'refund-happy-path',
    '--repeats',
    '1',
    '--engine',
    'postgres',
  ]);
  if (res.code !== 0) throw new Error(`filtered compare exited ${res.code}: ${res.stderr}`);
  filtered = join(dev, '.stategate', 'report.json');
}, 300_000);
afterAll(() => h?.close());

const mergeJob = { repeats: '', engine: '' };

/** A merge job's workspace with `report` where actions/download-artifact puts it. */
function mergeWorkspace(name: string, report: unknown): string {
  const ws = join(h.root, name);
  mkdirSync(join(ws, 'reports', 'stategate-shard-1'), { recursive: true });
  writeFileSync(join(ws, 'reports', 'stategate-shard-1', 'report.json'), JSON.stringify(report));
  cpSync(join(h.root, 'dev', 'stategate.yml'), join(ws, 'stategate.yml'));
  return ws;
}

describe('a filtered report in the action', () => {
  it('the filtered run itself passed every case it ran: only the filter keeps it from PASS', () => {
    const report = JSON.parse(readFileSync(filtered, 'utf8'));
    expect(report.cases.map((c: { id: string }) => c.id)).toEqual(['refund-happy-path']);
    expect(report.gate_reasons.map((r: { text: string }) => r.text)).toEqual([
      "a filtered run (--scenario refund-happy-path): 1 of the suite's 4 scenarios, not the whole suite",
    ]);
  });

  it('merge concludes the check neutral, never success', { timeout: 300_000 }, async () => {
    const report = JSON.parse(readFileSync(filtered, 'utf8'));
    const ws = mergeWorkspace('merge-filtered', report);
    const r = await h.step(
      'careful-fix',
      h.pullRequestEvent(52, 'careful-fix'),
      {
        ...mergeJob,
        merge: 'reports/*/report.json',
      },
      ws,
    );
    expect(r.outputs.verdict, r.stdout + r.stderr).toBe('WARN');
    const runs = h.checkRunsOn('careful-fix').filter((c) => c.status === 'completed');
    expect(runs.map((c) => c.conclusion)).toEqual(['neutral']);
    expect(runs[0].output.title).toMatch(/^WARN \(filtered\)/);
  });

  it('with the filter field stripped, the scenarios missing from its pin keep it neutral', {
    timeout: 300_000,
  }, async () => {
    const report = JSON.parse(readFileSync(filtered, 'utf8'));
    delete report.filter;
    const ws = mergeWorkspace('merge-stripped', report);
    const before = h.checkRunsOn('careful-fix').length;
    const r = await h.step(
      'careful-fix',
      h.pullRequestEvent(52, 'careful-fix'),
      {
        ...mergeJob,
        merge: 'reports/*/report.json',
      },
      ws,
    );
    expect(r.outputs.verdict, r.stdout + r.stderr).toBe('WARN');
    const runs = h
      .checkRunsOn('careful-fix')
      .slice(before)
      .filter((c) => c.status === 'completed');
    expect(runs.map((c) => c.conclusion)).toEqual(['neutral']);
    const merged = JSON.parse(readFileSync(r.outputs['report-path'], 'utf8'));
    expect(merged.gate_reasons.map((x: { text: string }) => x.text)).toEqual([
      'not the whole suite: 3 scenarios of the pinned suite have no case (admin-tool-requested, refund-success-without-effect, refund-timeout-after-mutation)',
    ]);
  });
});
