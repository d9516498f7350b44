import { describe, expect, it } from 'vitest';
import { MergeError, mergeReports, tryMergeReports } from '../../src/compare/merge.js';
import { compareSuite, type ReportFacts } from '../../src/compare/suite.js';
import type { Report } from '../../src/model/report.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { validateReport } from '../../src/run/read-report.js';

const asRead = (r: Report) => validateReport(JSON.parse(JSON.stringify(r)), 'report.json');

import { facts, improvedCase, regressedCase, timeoutCase, unchangedCase } from '../report/fixtures.js';

const shard = (
  index: number,
  total: number,
  cases: Parameters<typeof compareSuite>[0]['cases'],
  o: Partial<ReportFacts> = {},
): Report =>
  compareSuite({
    ...facts({
      shard: { index, total },
      durationMs: 1000 * index,
      startedAt: `2025-01-01T00:00:0${index}.000Z`,
      ...o,
    }),
    cases,
  });

describe('mergeReports', () => {
  it('joins the slices, recounts the classes and recomputes the verdict', () => {
    const one = shard(1, 3, [unchangedCase('a'), improvedCase('b')]);
    const two = shard(2, 3, [regressedCase('c')]);
    const three = shard(3, 3, [timeoutCase('d'), unchangedCase('e')]);
    expect([one.verdict, two.verdict, three.verdict]).toEqual(['WARN', 'WARN', 'BLOCK']);
    const merged = mergeReports([two, three, one]);
    expect(merged.verdict).toBe('BLOCK');
    expect(merged.counts).toEqual({
      'new-critical-failure': 1,
      regressed: 1,
      improved: 1,
      unchanged: 2,
      incomplete: 0,
    });
    expect(merged.cases.map((c) => c.id)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(merged.shard).toBeNull();
    expect(merged.missing_shards).toBeUndefined();
    expect(merged.started_at).toBe('2025-01-01T00:00:01.000Z');
    expect(merged.duration_ms).toBe(3000);
    expect(merged.stats?.head?.scenarios).toBe(5);
    expect(merged.stats?.head?.all_n).toBeCloseTo(3 / 5, 12);
  });

  it('a merge is PASS only when every slice is', () => {
    const merged = mergeReports([shard(1, 2, [unchangedCase('a')]), shard(2, 2, [unchangedCase('b')])]);
    expect(merged.verdict).toBe('PASS');
  });

  it('is never PASS when a shard did not report', () => {
    const merged = mergeReports([shard(1, 3, [unchangedCase('a')]), shard(3, 3, [unchangedCase('c')])]);
    expect(merged.missing_shards).toEqual([2]);
    expect(merged.verdict).toBe('WARN');
  });

  it('refuses reports of different pinned suites or templates, saying which', () => {
    const a = shard(1, 2, [unchangedCase('a')]);
    const b = shard(2, 2, [unchangedCase('b')], {
      pin: { suite_hash: '99999999999999999999', template_hash: a.pin.template_hash, scenarios: {} },
    });
    expect(tryMergeReports([a, b])).toEqual({
      ok: false,
      error:
        'report 2 (shard 2/2) has pin.suite_hash 999999999999 but report 1 (shard 1/2) has a1b2c3d4e5f6: merge only shards of one run on one pinned suite',
    });
    const c = shard(2, 2, [unchangedCase('b')], { pin: { ...a.pin, template_hash: '0000000000000000' } });
    expect(() => mergeReports([a, c])).toThrow(MergeError);
    expect(() => mergeReports([a, c])).toThrow(
      'report 2 (shard 2/2) has pin.template_hash 000000000000 but report 1 (shard 1/2) has f0e1d2c3b4a5',
    );
  });

  it('refuses overlapping slices: the same case twice, or the same shard twice', () => {
    const a = shard(1, 2, [unchangedCase('a'), unchangedCase('x')]);
    const b = shard(2, 2, [unchangedCase('x')]);
    expect(() => mergeReports([a, b])).toThrow(
      "case 'x' is in report 1 (shard 1/2) and report 2 (shard 2/2): the slices overlap",
    );
    const again = shard(1, 2, [unchangedCase('b')]);
    expect(() => mergeReports([a, again])).toThrow('shard 1/2 appears twice: reports 1 and 2');
  });

  it('refuses reports of different commits or shard counts', () => {
    const a = shard(1, 2, [unchangedCase('a')]);
    const other = shard(2, 2, [unchangedCase('b')], {
      sides: { base: a.sides.base, head: { ref: 'feature/lean-prompt', sha: 'abcabcabcabcabcabcabc' } },
    });
    expect(() => mergeReports([a, other])).toThrow(
      'report 2 (shard 2/2) ran head feature/lean-prompt @ abcabcabcabc but report 1 (shard 1/2) ran head feature/lean-prompt @ fedcba098765',
    );
    expect(() => mergeReports([a, shard(2, 3, [unchangedCase('b')])])).toThrow(
      'report 2 (shard 2/3) splits the run into 3 shards but report 1 (shard 1/2) into 2',
    );
  });

  it("decides with the merging checkout's gate, never the gate or verdict the shards carry", () => {
    const lenient = { gate: { block: [], warn: [] } };
    const a = shard(1, 2, [regressedCase('c')], lenient);
    const b = shard(2, 2, [unchangedCase('a')], lenient);
    expect([a.verdict, b.verdict]).toEqual(['PASS', 'PASS']);
    expect(mergeReports([a, b]).verdict).toBe('WARN');
    const strict = mergeReports([a, b], { gate: { block: ['regressed'], warn: [] } });
    expect(strict.verdict).toBe('BLOCK');
    expect(strict.gate).toEqual({ block: ['regressed'], warn: [] });
  });

  it('recomputes what each case derives from its counts, and refuses a class they contradict', () => {
    const a = shard(1, 1, [regressedCase('c')]);
    const edited: Report = JSON.parse(JSON.stringify(a));
    edited.cases[0].expectations_changed = [];
    edited.cases[0].reason = 'Nothing changed.';
    const merged = mergeReports([edited]);
    expect(merged.cases[0].expectations_changed).toEqual(a.cases[0].expectations_changed);
    expect(merged.cases[0].reason).toBe(a.cases[0].reason);
    edited.cases[0].class = 'improved';
    expect(tryMergeReports([edited])).toEqual({
      ok: false,
      error: `report 1 (shard 1/1): cases[0].class: says 'improved', but its own counts make it 'regressed' (${a.cases[0].reason})`,
    });
  });

  it('recomputes adaptive-repeat cases with the sequential test the report ran', () => {
    const adaptive = compareSuite({
      ...facts({ shard: { index: 1, total: 1 } }),
      sequential: { min: 3, max: 10 },
      cases: [timeoutCase('d'), regressedCase('c'), unchangedCase('a')],
    });
    const report: Report = JSON.parse(JSON.stringify(adaptive));
    const merged = mergeReports([report]);
    expect(merged.cases.map((c) => [c.id, c.class])).toEqual(adaptive.cases.map((c) => [c.id, c.class]));
    expect(merged.cases.map((c) => c.repeats_decision)).toEqual(
      adaptive.cases.map((c) => c.repeats_decision),
    );
    expect(merged.cases.map((c) => c.expectations_changed)).toEqual(
      adaptive.cases.map((c) => c.expectations_changed),
    );
  });

  it('keeps a report unverified, and marks the merge unverified when asked', () => {
    const a = shard(1, 2, [unchangedCase('a')]);
    const b = { ...shard(2, 2, [unchangedCase('b')]), unverified: { reason: 'a fork made it' } };
    expect(mergeReports([a, b]).unverified).toEqual({ reason: 'a fork made it' });
    expect(mergeReports([a], { unverified: 'from mallory/refunds' }).unverified).toEqual({
      reason: 'from mallory/refunds',
    });
    expect(mergeReports([a]).unverified).toBeUndefined();
  });

  it('says what the shards took from the baseline cache, in the merged comment too', () => {
    const key = (c: string) => c.repeat(64);
    const one = shard(1, 2, [unchangedCase('a')], {
      baselineCache: {
        key: key('a'),
        hit: true,
        reused_episodes: 6,
        stored_at: '2026-11-30T10:02:00.000Z',
        saved: false,
      },
    });
    const two = shard(2, 2, [unchangedCase('b')], {
      baselineCache: {
        key: key('b'),
        hit: true,
        reused_episodes: 4,
        stored_at: '2026-11-29T08:00:00.000Z',
        saved: false,
      },
    });
    const merged = mergeReports([asRead(one), asRead(two)]);
    expect(merged.baseline_cache).toMatchObject({
      hit: true,
      reused_episodes: 10,
      stored_at: '2026-11-29T08:00:00.000Z',
      saved: false,
      note: '2 of 2 shards reused base episodes, each under its own key',
    });
    // Neither shard's key: a digest of both, so no one mistakes it for one entry.
    expect([key('a'), key('b')]).not.toContain(merged.baseline_cache?.key);
    expect(renderMarkdown(merged, { variant: 'comment' })).toContain(
      'base: 10 episodes reused from the run of 2026-11-29 08:00 UTC',
    );
    // One shard without a cache (the other still counts); none at all leaves the field out.
    expect(mergeReports([one, shard(2, 2, [unchangedCase('b')])]).baseline_cache).toMatchObject({
      key: key('a'),
      reused_episodes: 6,
    });
    expect(mergeReports([shard(1, 1, [unchangedCase('a')])]).baseline_cache).toBeUndefined();
    // What the merge writes passes the strict schema merge reads with.
    expect(() => asRead(merged)).not.toThrow();
  });

  it('refuses nothing to merge and files that are not reports', () => {
    expect(() => mergeReports([])).toThrow('no reports to merge');
    expect(() => mergeReports([{ version: 2 } as unknown as Report])).toThrow(
      'report 1 is not a version 1 report.json (version 2)',
    );
  });

  it("keeps each case's lines through report.json and the merge, and refuses lines out of bounds", () => {
    const withLines = (id: string, lines: { scenario: number; expectations: Record<string, number> }) => {
      const input = regressedCase(id);
      return { ...input, scenario: { ...input.scenario, lines } };
    };
    const a = withLines('a', { scenario: 3, expectations: { 'email-sent': 9 } });
    const b = withLines('b', { scenario: 1, expectations: { 'email-sent': 4 } });
    // As merge reads them: written as JSON and validated against the strict schema.
    const merged = mergeReports([asRead(shard(2, 2, [b])), asRead(shard(1, 2, [a]))]);
    expect(merged.cases.map((c) => [c.id, c.lines])).toEqual([
      ['a', { scenario: 3, expectations: { 'email-sent': 9 } }],
      ['b', { scenario: 1, expectations: { 'email-sent': 4 } }],
    ]);

    const edited = (edit: (lines: Record<string, unknown>) => void) => {
      const r = JSON.parse(JSON.stringify(shard(1, 1, [a])));
      edit(r.cases[0].lines);
      return () => validateReport(r, 'report.json');
    };
    expect(edited((l) => (l.scenario = 0))).toThrow(
      'report.json: cases[0].lines.scenario: expected a line number (1 or more)',
    );
    expect(edited((l) => (l.expectations = { 'email-sent': 2.5 }))).toThrow(
      'cases[0].lines.expectations["email-sent"]',
    );
    expect(edited((l) => (l.expectations = { '<img src=x>': 2 }))).toThrow('expected an expectation id');
    expect(edited((l) => (l.extra = 1))).toThrow('cases[0].lines');
    const many = Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`e${i}`, i + 1]));
    expect(edited((l) => (l.expectations = many))).toThrow('expected at most 500 expectation lines');
  });
});
