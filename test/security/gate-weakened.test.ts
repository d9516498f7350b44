// A head that regresses and also relaxes the gate that would catch it: (a) empties `gate:`, (b)
// deletes the scenarios that catch it, (c) drops `critical` from the broken expectations and
// `regressed` from gate.warn. Judged by its own stategate.yml each of these passes; judged by the
// base's policy, with its suite changes measured against the base's suite, none does.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { gateDecision } from '../../src/gate/verdict.js';
import type { Report } from '../../src/model/report.js';
import { runCompare } from '../../src/run/pipeline.js';
import { agentVersion, type Change, git, makeDemoRepo } from '../action/demo-repo.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';

const CATCHING = ['refund-happy-path', 'refund-timeout-after-mutation', 'refund-success-without-effect'];
const SCENARIOS = [...CATCHING, 'refund-order-not-found'];

/** Replaces text in a file of the checkout; fails loudly when the text is not there. */
const edit =
  (path: string, from: string | RegExp, to: string): Change =>
  (dir) => {
    const file = join(dir, path);
    const text = readFileSync(file, 'utf8');
    const next = text.replace(from, to);
    if (next === text) throw new Error(`${path}: ${from} not found`);
    writeFileSync(file, next);
  };
const remove =
  (...paths: string[]): Change =>
  (dir) => {
    for (const p of paths) rmSync(join(dir, p));
  };

const GATE = /gate:\n {2}block: \[new-critical-failure\]\n {2}warn: \[regressed, incomplete, flaky\]\n/;
const regress = agentVersion('1.3.0');
const root = mkdtempSync(join(tmpdir(), 'sg-gate-weakened-'));
makeDemoRepo(root, SCENARIOS, [agentVersion('1.2.4'), edit('stategate.yml', 'repeats: 3', 'repeats: 2')], {
  'empty-gate': [regress, edit('stategate.yml', GATE, 'gate: { block: [], warn: [] }\n')],
  'delete-scenarios': [
    regress,
    remove(...CATCHING.map((s) => `scenarios/${s}.yaml`)),
    // One repeat hides a flaky break; the base's floor of two holds.
    edit('stategate.yml', 'repeats: 2', 'repeats: 1'),
  ],
  'not-critical': [
    regress,
    ...CATCHING.map((s) => edit(`scenarios/${s}.yaml`, /critical: true/g, 'critical: false')),
    edit('stategate.yml', GATE, 'gate:\n  block: [new-critical-failure]\n  warn: [incomplete, flaky]\n'),
  ],
});
const work = join(root, 'work');
// A base whose gate blocks a weakened suite, and the same deletion on top of it.
git(work, 'checkout', '-q', '-b', 'strict-main', 'main');
edit(
  'stategate.yml',
  GATE,
  'gate:\n  block: [new-critical-failure, suite-weakened]\n  warn: [regressed, incomplete, flaky]\n',
)(work);
git(work, 'commit', '-q', '-am', 'block weakened suites');
git(work, 'checkout', '-q', '-b', 'strict-delete', 'strict-main');
remove(...CATCHING.map((s) => `scenarios/${s}.yaml`))(work);
git(work, 'commit', '-q', '-am', 'delete the scenarios that catch the regression');
git(work, 'checkout', '-q', 'main');
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The verdict the head's own gate gives the cases: what the gate said before it read the base's policy. */
function verdictUnderHeadGate(report: Report, head: string): string {
  const yml = git(work, 'show', `${head}:stategate.yml`);
  const gate = /gate: \{ block: \[\], warn: \[\] \}/.test(yml)
    ? { block: [], warn: [] }
    : /warn: \[incomplete, flaky\]/.test(yml)
      ? { block: ['new-critical-failure'], warn: ['incomplete', 'flaky'] }
      : { block: ['new-critical-failure'], warn: ['regressed', 'incomplete', 'flaky'] };
  return gateDecision(report.cases, gate).verdict;
}

async function compare(head: string, engine: 'embedded' | 'postgres', base = 'main') {
  return runCompare({
    base,
    head,
    repo: work,
    out: join(root, 'out', engine, head),
    engine,
    databaseUrl: engine === 'postgres' ? TEST_DATABASE_URL : undefined,
  });
}

describe('a head that weakens the gate it is judged by (embedded engine)', () => {
  it('(a) an emptied gate: the base gate still blocks the regression, and the change is named', {
    timeout: 900_000,
  }, async () => {
    const { report, markdown } = await compare('empty-gate', 'embedded');
    expect(verdictUnderHeadGate(report, 'empty-gate')).toBe('PASS');
    expect(report.policy_from).toEqual({ side: 'base', reason: "the base's stategate.yml" });
    expect(report.gate).toEqual({
      block: ['new-critical-failure'],
      warn: ['regressed', 'incomplete', 'flaky'],
    });
    expect(report.verdict).toBe('BLOCK');
    expect(report.suite_changes?.filter((c) => c.weakens).map((c) => c.text)).toEqual([
      'gate.block no longer lists new-critical-failure',
      'gate.warn no longer lists regressed, incomplete, flaky',
    ]);
    expect(markdown).toContain('- warns: suite weakened: gate.block no longer lists new-critical-failure');
    expect(markdown).toMatch(/- blocks: \d new-critical-failure/);
  });

  it('(b) deleted scenarios and a lowered repeats: WARN, each named before the cases, the floor held', {
    timeout: 900_000,
  }, async () => {
    const { report, markdown } = await compare('delete-scenarios', 'embedded');
    expect(report.cases.map((c) => `${c.id}: ${c.class}`)).toEqual(['refund-order-not-found: unchanged']);
    expect(verdictUnderHeadGate(report, 'delete-scenarios')).toBe('PASS');
    expect(report.verdict).toBe('WARN');
    expect(report.repeats).toBe(2);
    expect(report.cases[0].head?.runs).toBe(2);
    const removed = CATCHING.map((s) => `scenario ${s} removed`).sort();
    expect(report.suite_changes).toEqual([
      ...removed.map((text, i) => ({
        kind: 'scenario-removed',
        subject: [...CATCHING].sort()[i],
        weakens: true,
        text,
      })),
      { kind: 'repeats-changed', subject: 'repeats', weakens: true, text: 'repeats lowered from 2 to 1' },
    ]);
    const reason = `- warns: suite weakened: ${[...removed, 'repeats lowered from 2 to 1'].join('; ')}`;
    expect(markdown.replace(/\\/g, '')).toContain(reason);
    const section = markdown.indexOf('### Suite changes against the base: 4, 4 weaken the suite');
    expect(section).toBeGreaterThan(0);
    expect(section).toBeLessThan(markdown.indexOf('unchanged case'));
    expect(markdown).toContain("Gate policy from the base's stategate.yml.");
  });

  it('(c) critical dropped and regressed unlisted: WARN on the regression and on the weakening', {
    timeout: 900_000,
  }, async () => {
    const { report, markdown } = await compare('not-critical', 'embedded');
    expect(verdictUnderHeadGate(report, 'not-critical')).toBe('PASS');
    expect(report.cases.filter((c) => c.class === 'regressed').map((c) => c.id)).toEqual(
      expect.arrayContaining(['refund-success-without-effect', 'refund-timeout-after-mutation']),
    );
    expect(report.counts['new-critical-failure']).toBe(0);
    expect(report.verdict).toBe('WARN');
    const weak = report.suite_changes!.filter((c) => c.weakens).map((c) => c.text);
    expect(weak).toContain('gate.warn no longer lists regressed');
    expect(weak).toContain(
      'scenario refund-timeout-after-mutation: expectation refunded-exactly-once loosened: no longer critical',
    );
    expect(markdown.replace(/\\/g, '')).toMatch(/- warns: suite weakened: [^\n]*no longer critical/);
    expect(markdown).toMatch(/- warns: \d regressed/);
  });

  it('a base whose gate blocks suite-weakened: BLOCK and exit 2 through the CLI', {
    timeout: 900_000,
  }, async () => {
    const out = join(root, 'out', 'cli');
    const code = await main([
      'compare',
      '--repo',
      work,
      '--base',
      'strict-main',
      '--head',
      'strict-delete',
      '--engine',
      'embedded',
      '--out',
      out,
    ]);
    expect(code).toBe(2);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as Report;
    expect(report.verdict).toBe('BLOCK');
    expect(report.counts.unchanged).toBe(1);
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md.replace(/\\/g, '')).toContain('- blocks: suite weakened: scenario refund-happy-path removed');
  });
});

describe('on the postgres engine', () => {
  it('(b) deleted scenarios: WARN', { timeout: 900_000 }, async () => {
    const { report } = await compare('delete-scenarios', 'postgres');
    expect(report.engine).toBe('postgres');
    expect(report.verdict).toBe('WARN');
    expect(report.repeats).toBe(2);
    expect(report.suite_changes?.map((c) => c.kind)).toEqual([
      'scenario-removed',
      'scenario-removed',
      'scenario-removed',
      'repeats-changed',
    ]);
  });
});
