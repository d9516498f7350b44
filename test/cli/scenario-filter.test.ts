// `--scenario` and `--tag` on `run` and `compare`, through the bundled command on the suite
// `stategate init` writes: the filter selects by glob and tag, a filter that selects nothing lists
// what exists, and a filtered run's report never passes as a whole-suite run, neither as it is, nor
// fed to `merge`, nor with its `filter` field stripped.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git } from '../helpers/demo-repo.js';
import { initializedSuite, stategate } from '../helpers/stategate-cli.js';

let dir: string;
beforeAll(() => {
  dir = initializedSuite('sg-filter-');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const runArgs = ['--repeats', '1', '--engine', 'postgres', '--no-color'];
const readReport = (out: string) => JSON.parse(readFileSync(join(dir, out, 'report.json'), 'utf8'));

describe('stategate run --scenario / --tag', () => {
  it('grades only the scenarios a glob selects, and says so in report.json and report.md', {
    timeout: 300_000,
  }, () => {
    const res = stategate(dir, ['run', '--scenario', 'refund-h*', '--out', 'one', ...runArgs]);
    expect(res.stderr).toContain(
      "warning: filtered run (--scenario refund-h*): 1 of the suite's 2 scenarios; its verdict is WARN at best",
    );
    expect(res.stdout).toContain('Stategate: WARN (filtered)');
    expect(res.code).toBe(0);
    const report = readReport('one');
    expect(report.cases.map((c: { id: string }) => c.id)).toEqual(['refund-happy-path']);
    expect(report.filter).toEqual({ scenarios: ['refund-h*'], tags: [], selected: 1, total: 2 });
    // The case passed: the filter alone keeps the verdict from PASS.
    expect(report.cases[0].head.passes).toBe(1);
    expect(report.verdict).toBe('WARN');
    expect(report.gate_reasons).toEqual([
      {
        verdict: 'WARN',
        class: null,
        cases: [],
        text: "a filtered run (--scenario refund-h*): 1 of the suite's 2 scenarios, not the whole suite",
      },
    ]);
    const md = readFileSync(join(dir, 'one', 'report.md'), 'utf8');
    expect(md).toContain('## Stategate: WARN (filtered)\n');
    expect(md).toContain(
      "**Filtered (--scenario refund-h\\*): 1 of the suite's 2 scenarios ran. This is not a whole-suite run, so its verdict is WARN at best.**",
    );
  });

  it('selects by tag, and a scenario must match --scenario and --tag together', { timeout: 300_000 }, () => {
    const res = stategate(dir, ['run', '--tag', 'fault', '--out', 'tag', ...runArgs]);
    expect(res.code, res.stderr).toBe(0);
    expect(readReport('tag').cases.map((c: { id: string }) => c.id)).toEqual([
      'refund-timeout-after-mutation',
    ]);
    expect(readReport('tag').filter).toEqual({ scenarios: [], tags: ['fault'], selected: 1, total: 2 });

    const none = stategate(dir, ['run', '--scenario', 'refund-happy-path', '--tag', 'fault', ...runArgs]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      'stategate: no scenario matches --scenario refund-happy-path and carries --tag fault\n',
    );
  });

  it('refuses a pattern or a tag that selects nothing, listing the ids or tags there are', () => {
    const id = stategate(dir, ['run', '--scenario', 'refund-*', '--scenario', 'refnd-happy', ...runArgs]);
    expect(id.code).toBe(1);
    expect(id.stderr).toContain(
      "stategate: --scenario refnd-happy matches no scenario; the suite's scenarios are refund-happy-path, refund-timeout-after-mutation\n",
    );
    const tag = stategate(dir, ['run', '--tag', 'faults', ...runArgs]);
    expect(tag.code).toBe(1);
    expect(tag.stderr).toContain(
      "stategate: --tag faults is on no scenario; the suite's tags are fault, refund\n",
    );
    // Nothing ran, so nothing was written.
    expect(() => readFileSync(join(dir, '.stategate', 'report.json'))).toThrow();
  });

  it('is refused by the commands that run no scenarios', () => {
    for (const command of ['validate', 'merge', 'demo']) {
      const res = stategate(dir, [command, '--tag', 'fault']);
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(`stategate: --tag applies to run, compare and plan, not ${command}\n`);
    }
  });
});

describe('a filtered report is not a whole-suite run', () => {
  it('merge keeps it filtered: WARN at best, and --fail-on warn fails', { timeout: 300_000 }, () => {
    const res = stategate(dir, ['run', '--scenario', 'refund-happy-path', '--out', 'm1', ...runArgs]);
    expect(res.code, res.stderr).toBe(0);
    const merged = stategate(dir, ['merge', 'm1/report.json', '--out', 'merged', '--no-color']);
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stdout).toContain('Stategate: WARN (filtered)');
    expect(readReport('merged').verdict).toBe('WARN');
    expect(readReport('merged').filter).toEqual({
      scenarios: ['refund-happy-path'],
      tags: [],
      selected: 1,
      total: 2,
    });
    expect(stategate(dir, ['merge', 'm1/report.json', '--out', 'merged', '--fail-on', 'warn']).code).toBe(2);
  });

  it('with its filter field stripped, the cases missing from its pin still keep it from PASS', {
    timeout: 300_000,
  }, () => {
    const res = stategate(dir, ['run', '--scenario', 'refund-happy-path', '--out', 'm2', ...runArgs]);
    expect(res.code, res.stderr).toBe(0);
    const report = readReport('m2');
    delete report.filter;
    writeFileSync(join(dir, 'm2', 'report.json'), JSON.stringify(report));
    const merged = stategate(dir, ['merge', 'm2/report.json', '--out', 'stripped', '--no-color']);
    expect(merged.code, merged.stderr).toBe(0);
    const out = readReport('stripped');
    expect(out.verdict).toBe('WARN');
    expect(out.gate_reasons.map((r: { text: string }) => r.text)).toEqual([
      'not the whole suite: 1 scenario of the pinned suite has no case (refund-timeout-after-mutation)',
    ]);
  });
});

describe('stategate compare --scenario', () => {
  it('still blocks a regression in the scenarios it runs', { timeout: 300_000 }, () => {
    const repo = mkdtempSync(join(tmpdir(), 'sg-filter-compare-'));
    try {
      expect(stategate(repo, ['init']).code).toBe(0);
      git(repo, 'init', '-q');
      git(repo, 'add', '-A');
      git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'suite');
      const agent = join(repo, 'agent', 'agent.py');
      writeFileSync(agent, readFileSync(agent, 'utf8').replace(', "idempotency_key": key}', '}'));
      const res = stategate(repo, [
        'compare',
        '--base',
        'HEAD',
        '--head',
        '.',
        '--scenario',
        '*timeout*',
        ...runArgs,
      ]);
      expect(res.stdout).toContain('Stategate: BLOCK (filtered)');
      expect(res.code).toBe(2);
      const report = JSON.parse(readFileSync(join(repo, '.stategate', 'report.json'), 'utf8'));
      expect(report.cases.map((c: { id: string; class: string }) => [c.id, c.class])).toEqual([
        ['refund-timeout-after-mutation', 'new-critical-failure'],
      ]);
      // The warning about what ran is in the report, not only on stderr.
      expect(report.checkout_warnings).toEqual([
        {
          side: 'base',
          text: expect.stringMatching(
            /^'HEAD' is the commit [0-9a-f]{7}: the committed tree runs, not the working tree/,
          ),
        },
      ]);
      expect(readFileSync(join(repo, '.stategate', 'report.md'), 'utf8')).toMatch(
        /\*\*base: 'HEAD' is the commit [0-9a-f]{7}: the committed tree runs/,
      );
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
