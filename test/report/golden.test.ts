// Every output a user reads, byte for byte: report.md, the PR comment body, the check run, the job
// summary, the terminal, JUnit and the data report.html embeds of each golden report (a real demo run, a real head-only run, and
// the sample the report tests build). A difference means a rendering changed: review it, then
// regenerate with `npm run goldens`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GOLDEN_SETS, type GoldenSet, goldenOutputs, RUN_SETS } from '../../scripts/golden-outputs.js';
import type { Report } from '../../src/model/report.js';
import { ReportSchema } from '../../src/report/report-schema.js';
import { validateReport } from '../../src/run/read-report.js';
import { goldenSampleEpisodes, goldenSampleReport } from './fixtures.js';

const root = join(import.meta.dirname, '..', '..');
const dir = (set: string) => join(root, 'test', 'report', 'golden', set);
const read = (path: string) => readFileSync(path, 'utf8');

// A run's fixture is read as any report.json from outside is: validated, its verdict and reasons recomputed.
function reportOf(set: GoldenSet): Report {
  if ((RUN_SETS as readonly string[]).includes(set))
    return validateReport(JSON.parse(read(join(dir(set), 'report.json'))), `${set}/report.json`);
  return goldenSampleReport();
}

const pick = (o: Record<string, string>, key: string) => ({ [key]: o[key] });

for (const set of Object.keys(GOLDEN_SETS) as GoldenSet[]) {
  describe(`golden outputs: ${GOLDEN_SETS[set]}`, () => {
    const report = reportOf(set);

    it('has a report.json that merge would accept (the strict schema)', () => {
      const parsed = ReportSchema.safeParse(report);
      expect(parsed.success ? 'valid' : parsed.error.message).toBe('valid');
      if (!(RUN_SETS as readonly string[]).includes(set))
        expect(read(join(dir(set), 'report.json'))).toBe(`${JSON.stringify(report, null, 2)}\n`);
    });

    const fromRun = (RUN_SETS as readonly string[]).includes(set);
    const episodes = fromRun ? null : goldenSampleEpisodes();
    // report.html embeds the report object as is (key order included): the one npm run goldens read back.
    const readBack = fromRun
      ? report
      : validateReport(JSON.parse(read(join(dir(set), 'report.json'))), 'sample');
    const outputs = {
      ...goldenOutputs(report),
      ...pick(goldenOutputs(readBack, episodes), 'report-html-data.json'),
    };
    for (const [file, text] of Object.entries(outputs)) {
      it(`renders ${file} exactly as committed (npm run goldens regenerates it)`, () => {
        expect(text).toBe(read(join(dir(set), file)));
      });
    }
  });
}

describe('docs/example-report.md', () => {
  it("is the demo's report.md under its introduction, as npm run goldens writes it", () => {
    const page = read(join(root, 'docs', 'example-report.md'));
    const md = read(join(dir('demo'), 'report.md'));
    expect(page.endsWith(`\n---\n\n${md}`)).toBe(true);
  });
});

describe('what the goldens show', () => {
  // The goldens are compared as wholes above; these name what a reader must find in them.
  const demo = read(join(dir('demo'), 'report.md'));
  const headOnly = read(join(dir('head-only'), 'report.md'));
  const sample = read(join(dir('sample'), 'report.md'));

  it('folds a step-by-step table of base and head calls under each changed case, naming the episodes', () => {
    expect(demo).toMatch(
      /<details><summary>Steps: base repeat \d+ \(passed\) beside head repeat \d+ \(failed\)<\/summary>/,
    );
    expect(demo).toContain('| step | base call | base got | head call | head got |');
    expect(demo).toContain('(applied, fault timeout_after_mutation)');
  });

  it('shows a crashed agent’s last stderr lines in a fence, and a case failing on both sides as still failing', () => {
    expect(sample).toContain(
      '**Agent head:** head repeat 1: the agent exited with code 1: stdout is empty: the agent printed no result; its stderr:\n\n~~~\nTraceback (most recent call last):',
    );
    expect(sample).toContain("KeyError: 'state'\n~~~");
    expect(sample).toContain('### Still failing (1)');
    expect(sample).toContain('#### `partial-refund`: still failing');
    expect(sample).toContain('3 unchanged (1 still failing); 3 flaky**');
    expect(sample).not.toContain('$0 · 0 in / 0 out');
    expect(sample).not.toMatch(/\| \\\$0 \| 0 in \/ 0 out \|/);
  });

  it('labels the cases of a head-only run pass or fail, never unchanged against a missing base', () => {
    expect(headOnly).toContain('**7 pass, 3 fail; 0 flaky**');
    expect(headOnly).toContain('<details><summary>7 passing cases</summary>');
    expect(headOnly).toContain('| `refund-over-limit` | pass | 3/3 |');
    expect(headOnly).not.toMatch(/unchanged|New scenario/);
  });
});
