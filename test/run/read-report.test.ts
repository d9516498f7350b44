// A report.json read from a file is not believed about its own verdict: the verdict, the gate's
// reasons and the totals are computed again from its (rechecked) cases, for rendering and for merge
// alike, and a report.json written before `gate_reasons` existed renders with its reasons.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeReports } from '../../src/compare/merge.js';
import { compareSuite } from '../../src/compare/suite.js';
import type { Report } from '../../src/model/report.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { renderTerminal } from '../../src/report/terminal.js';
import { readReportFile } from '../../src/run/read-report.js';
import { facts, timeoutCase, unchangedCase } from '../report/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'stategate-read-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, report: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

/** A real report with one new critical failure (BLOCK) and one unchanged case. */
function blocking(): Report {
  return compareSuite({ ...facts(), cases: [timeoutCase(), unchangedCase('lookup-only')] });
}

describe('reading a report.json', () => {
  it('recomputes a verdict and reasons that claim PASS over a new critical failure: it renders and merges as BLOCK', () => {
    const honest = blocking();
    expect(honest.verdict).toBe('BLOCK');
    const forged: Report = {
      ...honest,
      verdict: 'PASS',
      gate_reasons: [],
      counts: { ...honest.counts, 'new-critical-failure': 0, unchanged: 2 },
    };
    const read = readReportFile(write('forged.json', forged), 'forged.json');
    expect(read.verdict).toBe('BLOCK');
    expect(read.counts['new-critical-failure']).toBe(1);
    expect(read.gate_reasons).toEqual(honest.gate_reasons);
    expect(read.gate_reasons?.[0]).toMatchObject({
      verdict: 'BLOCK',
      class: 'new-critical-failure',
      cases: ['refund-timeout-after-mutation'],
    });

    const md = renderMarkdown(read);
    expect(md).toContain('## Stategate: BLOCK');
    expect(md).toContain('- blocks: 1 new-critical-failure (refund-timeout-after-mutation)');
    expect(renderTerminal(read)).toContain('blocks: 1 new-critical-failure (refund-timeout-after-mutation)');

    const merged = mergeReports([read]);
    expect(merged.verdict).toBe('BLOCK');
    expect(merged.gate_reasons).toEqual(honest.gate_reasons);
    expect(renderMarkdown(merged)).toContain('## Stategate: BLOCK');
  });

  it('does not keep reasons a report invents for a clean run', () => {
    const clean = compareSuite({ ...facts(), cases: [unchangedCase('lookup-only')] });
    expect(clean.verdict).toBe('PASS');
    const forged: Report = {
      ...clean,
      gate_reasons: [{ verdict: 'BLOCK', class: 'regressed', cases: ['lookup-only'], text: 'made up' }],
    };
    const read = readReportFile(write('invented.json', forged), 'invented.json');
    expect(read.verdict).toBe('PASS');
    expect(read.gate_reasons).toEqual([]);
    expect(renderMarkdown(read)).not.toContain('made up');
  });

  it('gives a report.json without gate_reasons (written before the field) its reasons when read', () => {
    const { gate_reasons, ...old } = blocking();
    expect(gate_reasons?.length).toBeGreaterThan(0);
    const read = readReportFile(write('old.json', old), 'old.json');
    expect(read.gate_reasons).toEqual(gate_reasons);
    expect(renderMarkdown(read)).toContain(
      '- blocks: 1 new-critical-failure (refund-timeout-after-mutation)',
    );
  });
});
