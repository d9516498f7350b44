// Annotations land on the scenario file's own lines (carried by each case from the config loader,
// never read back from the checkout); text limits are kept; problems are placed.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { caseAnnotations, repositoryPaths } from '../../src/action/annotations.js';
import { postingWarning } from '../../src/action/permissions.js';
import { placeProblem, problemAnnotations } from '../../src/action/problems.js';
import { openFence, trimMarkdown } from '../../src/action/trim.js';
import { compareCase } from '../../src/compare/case.js';
import { readScenario } from '../../src/config/scenario-file.js';
import { parseYaml } from '../../src/config/yaml-source.js';
import type { CaseReport, Report } from '../../src/model/report.js';
import { call, passing, repeats } from '../compare/builders.js';

const repo = mkdtempSync(join(tmpdir(), 'stategate-annotations-'));
mkdirSync(join(repo, 'agent', 'scenarios'), { recursive: true });
const SCENARIO_FILE = 'scenarios/refund-timeout.yaml';
const scenarioText = `# A refund whose provider times out after applying it.
id: refund-timeout
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
afterAll(() => rmSync(repo, { recursive: true, force: true }));

/** The scenario as the config loader reads it, with the lines it found. */
function loadedScenario() {
  const parsed = parseYaml(SCENARIO_FILE, scenarioText);
  const { scenario, problems } = readScenario(parsed.value, parsed.source, SCENARIO_FILE);
  expect(problems).toEqual([]);
  return scenario!;
}

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
    file: SCENARIO_FILE,
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

const lineOf = (text: string) => scenarioText.split('\n').findIndex((l) => l.includes(text)) + 1;

describe('annotations', () => {
  it('the loader finds the line of the scenario id and of each expectation id; the case carries them', () => {
    const s = loadedScenario();
    expect(s.lines).toEqual({
      scenario: lineOf('id: refund-timeout'),
      expectations: {
        'refunded-exactly-once': lineOf('id: refunded-exactly-once'),
        'no-double-refund': lineOf('id: no-double-refund'),
      },
    });
    const c = compareCase(s, passing(s, 'base', 2), passing(s, 'head', 2));
    expect(c.file).toBe(SCENARIO_FILE);
    expect(c.lines).toEqual(s.lines);
  });

  it('annotates a broken expectation at its line, from the YAML through the compared case', () => {
    const s = loadedScenario();
    const refund = () => call('refund_payment', { order_id: 'ORD-1001', amount: 40 }, { mutated: true });
    const head = repeats(
      s,
      'head',
      Array.from({ length: 3 }, () => ({
        calls: [refund(), refund()],
        verdicts: { 'no-double-refund': 'fail' as const },
      })),
    );
    const c = compareCase(s, passing(s, 'base', 3), head);
    expect(c.class).toBe('new-critical-failure');
    const out = caseAnnotations(report([c]), repositoryPaths(repo, join(repo, 'agent')));
    expect(out.map((a) => [a.path, a.start_line, a.end_line, a.title])).toEqual([
      [
        'agent/scenarios/refund-timeout.yaml',
        lineOf('id: no-double-refund'),
        lineOf('id: no-double-refund'),
        'refund-timeout: critical expectation no-double-refund broke (new-critical-failure)',
      ],
    ]);
  });

  it('annotates each broken expectation of a blocking case at its line, with the evidence', () => {
    const blocking = caseReport({
      class: 'new-critical-failure',
      lines: { scenario: 2, expectations: { 'no-double-refund': 12, 'refunded-exactly-once': 6 } },
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
        {
          id: 'completed',
          critical: true,
          change: 'broke',
          base: { pass: 5, fail: 0, error: 0 },
          head: { pass: 4, fail: 1, error: 0 },
        },
      ],
    });
    const out = caseAnnotations(
      report([blocking, caseReport({ id: 'other' })]),
      repositoryPaths(repo, join(repo, 'agent')),
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
      // The implicit expectation has no line of its own: it lands on the scenario's id.
      expect.objectContaining({ start_line: 2, end_line: 2, title: expect.stringContaining('completed') }),
    ]);
  });

  it('annotates warning classes as warnings, at the scenario id when no expectation is named', () => {
    const out = caseAnnotations(
      report([
        caseReport({
          class: 'regressed',
          reason: 'the sandbox could not be cloned',
          lines: { scenario: 2, expectations: {} },
        }),
      ]),
      repositoryPaths(repo, join(repo, 'agent')),
    );
    expect(out).toMatchObject([
      { annotation_level: 'warning', start_line: 2, message: 'the sandbox could not be cloned' },
    ]);
  });

  it('a report without lines (an older file) annotates line 1 of the file', () => {
    const out = caseAnnotations(
      report([
        caseReport({
          class: 'new-critical-failure',
          expectations_changed: [
            {
              id: 'no-double-refund',
              critical: true,
              change: 'broke',
              base: { pass: 5, fail: 0, error: 0 },
              head: { pass: 1, fail: 4, error: 0 },
            },
          ],
        }),
        caseReport({ id: 'other', class: 'regressed' }),
      ]),
      repositoryPaths(repo, join(repo, 'agent')),
    );
    expect(out.map((a) => [a.path, a.start_line, a.annotation_level])).toEqual([
      ['agent/scenarios/refund-timeout.yaml', 1, 'failure'],
      ['agent/scenarios/refund-timeout.yaml', 1, 'warning'],
    ]);
  });

  it('a path that leaves the repository is not annotated', () => {
    const pathOf = repositoryPaths(repo, join(repo, 'agent'));
    expect(pathOf('../../outside.yaml')).toBeNull();
    expect(pathOf('/etc/passwd')).toBeNull();
    expect(pathOf('..')).toBeNull();
    const out = caseAnnotations(
      report([caseReport({ class: 'incomplete', file: '../../outside.yaml' })]),
      pathOf,
    );
    expect(out).toEqual([]);
  });

  it('reads nothing from the checkout: a scenario the agent replaced by a FIFO or a link does not hang it', () => {
    // What the head's agent may leave in its writable checkout after the run: the scenario file a
    // FIFO (a read would block forever), another a link to a file outside the repository.
    const dir = mkdtempSync(join(tmpdir(), 'stategate-annotations-fifo-'));
    try {
      mkdirSync(join(dir, 'scenarios'));
      expect(spawnSync('mkfifo', [join(dir, SCENARIO_FILE)]).status).toBe(0);
      writeFileSync(join(dir, 'outside.yaml'), 'a: 1\nb: 2\nc: 3\nd: 4\nid: linked\n');
      symlinkSync(join(dir, 'outside.yaml'), join(dir, 'scenarios', 'linked.yaml'));
      const cases = [
        caseReport({ class: 'incomplete', lines: { scenario: 2, expectations: {} } }),
        caseReport({ id: 'linked', class: 'incomplete', file: 'scenarios/linked.yaml' }),
      ];
      // In a child with a deadline: a read of the FIFO would hang this worker, not fail it.
      const script = `
        import { caseAnnotations, repositoryPaths } from ${JSON.stringify(resolve('src/action/annotations.ts'))};
        const out = caseAnnotations(${JSON.stringify(report(cases))}, repositoryPaths(${JSON.stringify(dir)}, ${JSON.stringify(dir)}));
        process.stdout.write(JSON.stringify(out.map((a) => [a.path, a.start_line])));
      `;
      const child = spawnSync(resolve('node_modules/.bin/tsx'), ['--eval', script], {
        encoding: 'utf8',
        timeout: 120_000,
        killSignal: 'SIGKILL',
      });
      expect(child.signal, 'the child hung on the FIFO and was killed').toBeNull();
      expect(child.stderr).toBe('');
      expect(JSON.parse(child.stdout)).toEqual([
        ['scenarios/refund-timeout.yaml', 2],
        // Line 5 of the linked file is not read: the case has no lines, so line 1.
        ['scenarios/linked.yaml', 1],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the annotation code has no file reading and no YAML parser to reach for', () => {
    const source = readFileSync(resolve('src/action/annotations.ts'), 'utf8');
    expect(source).not.toMatch(/from 'node:fs'|from 'fs'|from 'yaml'|readFile|openSync|createReadStream/);
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
