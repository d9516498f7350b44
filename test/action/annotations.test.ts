// Annotations land on the scenario file's own lines; text limits are kept; problems are placed.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { caseAnnotations, expectationLines, scenarioLocator } from '../../src/action/annotations.js';
import { postingWarning } from '../../src/action/permissions.js';
import { placeProblem, problemAnnotations } from '../../src/action/problems.js';
import { openFence, trimMarkdown } from '../../src/action/trim.js';
import type { CaseReport, Report } from '../../src/model/report.js';

const repo = mkdtempSync(join(tmpdir(), 'stategate-annotations-'));
mkdirSync(join(repo, 'agent', 'scenarios'), { recursive: true });
const scenario = `id: refund-timeout
description: The provider applies the refund, then times out.
input:
  message: "Refund $40 please"
expect:
  - id: refunded-exactly-once
    critical: true
    query: SELECT refund_count FROM orders WHERE id = 'ORD-1001'
    equals: 1

  - critical: true
    id: no-double-refund
    no_duplicate_effect: refund_payment
`;
writeFileSync(join(repo, 'agent', 'scenarios', 'refund-timeout.yaml'), scenario);
afterAll(() => rmSync(repo, { recursive: true, force: true }));

const side = { runs: 5, passes: 5, expectations: {} };
function caseReport(overrides: Partial<CaseReport>): CaseReport {
  return {
    id: 'refund-timeout',
    class: 'unchanged',
    flaky: { base: false, head: false },
    base: side,
    head: side,
    divergence: null,
    state_diff: [],
    file: 'scenarios/refund-timeout.yaml',
    ...overrides,
  };
}

function report(cases: CaseReport[]): Report {
  return {
    version: 1,
    verdict: 'BLOCK',
    engine: 'postgres',
    pin: { suite_hash: 'x', template_hash: 'y', scenarios: {} },
    sides: { base: { ref: 'b', sha: 'b' }, head: { ref: 'h', sha: 'h' } },
    counts: { 'new-critical-failure': 1, regressed: 0, improved: 0, unchanged: 0, incomplete: 0 },
    cases,
  };
}

describe('annotations', () => {
  it('finds the line of each expectation id, and of the scenario id', () => {
    const lines = expectationLines(join(repo, 'agent', 'scenarios', 'refund-timeout.yaml'));
    expect(lines.top).toBe(1);
    expect(Object.fromEntries(lines.expectations)).toEqual({
      'refunded-exactly-once': 6,
      'no-double-refund': 12,
    });
  });

  it('annotates each broken expectation of a blocking case at its line, with the evidence', () => {
    const blocking = caseReport({
      class: 'new-critical-failure',
      divergence: {
        kind: 'different-tool',
        step: 2,
        sentence: 'At step 2 the base called get_refund_policy; the head called refund_payment.',
      },
      state_diff: [{ table: 'orders', key: 'ORD-1001', column: 'refund_count', base: 1, head: 2 }],
      expectations_changed: [
        {
          id: 'no-double-refund',
          critical: true,
          change: 'broke',
          base: { pass: 5, fail: 0, error: 0 },
          head: { pass: 1, fail: 4, error: 0 },
          message: 'refund_payment applied refund:ORD-1001 twice',
        },
        {
          id: 'refunded-exactly-once',
          critical: true,
          change: 'fixed',
          base: { pass: 0, fail: 5, error: 0 },
          head: { pass: 5, fail: 0, error: 0 },
        },
      ],
    });
    const out = caseAnnotations(
      report([blocking, caseReport({ id: 'other' })]),
      scenarioLocator(repo, join(repo, 'agent')),
    );
    expect(out).toEqual([
      {
        path: 'agent/scenarios/refund-timeout.yaml',
        start_line: 12,
        end_line: 12,
        annotation_level: 'failure',
        title: 'refund-timeout: critical expectation no-double-refund broke (new-critical-failure)',
        message: [
          'no-double-refund failed in 4 of 5 head runs, passed in 5 of 5 base runs.',
          'refund_payment applied refund:ORD-1001 twice',
          'At step 2 the base called get_refund_policy; the head called refund_payment.',
          'orders[ORD-1001].refund_count: base 1, head 2',
        ].join('\n'),
      },
    ]);
  });

  it('annotates warning classes as warnings, at the scenario id when no expectation is named', () => {
    const out = caseAnnotations(
      report([caseReport({ class: 'incomplete', reason: 'the sandbox could not be cloned' })]),
      scenarioLocator(repo, join(repo, 'agent')),
    );
    expect(out).toMatchObject([
      { annotation_level: 'warning', start_line: 1, message: 'the sandbox could not be cloned' },
    ]);
  });
});

describe('trimMarkdown', () => {
  it('keeps short text and cuts long text at a line, under the limit, with the note', () => {
    expect(trimMarkdown('short', 100, 'note')).toBe('short');
    const long = Array.from({ length: 50 }, (_, i) => `line ${i}`).join('\n');
    const cut = trimMarkdown(long, 120, '_trimmed_');
    expect(cut.length).toBeLessThan(120);
    expect(cut.endsWith('\n\n_trimmed_\n')).toBe(true);
    expect(long.startsWith(cut.slice(0, cut.indexOf('\n\n_trimmed_')))).toBe(true);
  });

  it('closes a fenced block it cuts through', () => {
    const text = `intro\n\`\`\`diff\n${Array.from({ length: 40 }, (_, i) => `- row ${i}`).join('\n')}\n\`\`\`\n`;
    const cut = trimMarkdown(text, 150, 'note');
    expect((cut.match(/^```/gm) ?? []).length % 2).toBe(0);
    expect(cut.length).toBeLessThan(150);
  });

  it('closes a tilde fence (an agent stderr block) it cuts through, so the note is not swallowed', () => {
    // Backtick lines inside a tilde block do not close it: only a tilde fence as long does.
    const body = Array.from({ length: 40 }, (_, i) => (i % 5 === 0 ? '```' : `  File "a.py", line ${i}`));
    const text = `**Agent head:** exited with code 1:\n\n~~~~\n${body.join('\n')}\n~~~~\n\nafter\n`;
    const cut = trimMarkdown(text, 300, 'note');
    expect(cut.length).toBeLessThan(300);
    expect(openFence(cut)).toBeNull();
    const lines = cut.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('note');
    expect(lines.filter((l) => l === '~~~~')).toHaveLength(2);
  });
});

describe('problems and permissions', () => {
  it('places problems relative to the workspace, and leaves out files outside it', () => {
    const inside = placeProblem(
      {
        file: join(repo, 'agent', 'scenarios', 'x.yaml'),
        line: 4,
        col: 3,
        path: 'expect[0].equals',
        message: 'missing',
      },
      repo,
    );
    expect(inside).toEqual({
      file: 'agent/scenarios/x.yaml',
      line: 4,
      col: 3,
      message: 'expect[0].equals: missing',
    });
    const outside = placeProblem(
      { file: '/tmp/elsewhere/stategate.yml', line: 1, col: 1, message: 'bad' },
      repo,
    );
    expect(outside).toEqual({ line: 1, col: 1, message: '/tmp/elsewhere/stategate.yml:1:1: bad' });
    expect(problemAnnotations([inside, outside])).toHaveLength(1);
  });

  it('names the permission to add, and the workflow_run route for forks', () => {
    const denied = Object.assign(new Error('Resource not accessible by integration'), { status: 403 });
    expect(postingWarning('check', denied, false)).toContain('`permissions: checks: write`');
    expect(postingWarning('comment', denied, false)).toContain('`permissions: pull-requests: write`');
    const fork = postingWarning('comment', denied, true);
    expect(fork).toContain('workflow_run');
    expect(fork).not.toContain('permissions:');
    expect(
      postingWarning('check', Object.assign(new Error('Server Error'), { status: 502 }), false),
    ).not.toContain('permissions');
  });
});
