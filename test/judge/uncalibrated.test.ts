// Uncalibrated judge verdicts in the pure pipeline: marked on the expectation, never blocking, shown
// in every rendering; calibrated criteria (for the judge's model) behave as any critical expectation.
import { describe, expect, it } from 'vitest';
import { tryMergeReports } from '../../src/compare/merge.js';
import { compareSuite } from '../../src/compare/suite.js';
import type { CriterionCalibration } from '../../src/config/schema.js';
import { calibratedCriteria } from '../../src/judge/calibration.js';
import { renderJunit } from '../../src/report/junit.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { renderSideTable, renderTerminal } from '../../src/report/terminal.js';
import { type EpisodeSpec, passing, repeats, scenario } from '../compare/builders.js';
import { facts } from '../report/fixtures.js';

const POLITE = 'The reply is polite';
const s = scenario('polite-refund', [
  { id: 'refunded-once', critical: true },
  { id: 'polite', critical: true, judge: { criterion: POLITE, threshold: 0.7 } },
]);
const rude: EpisodeSpec = { verdicts: { polite: 'fail' }, messages: { polite: 'the judge failed it' } };

function report(calibrated?: string[], base = true) {
  return compareSuite({
    ...facts(),
    cases: [
      { scenario: s, base: base ? passing(s, 'base', 3) : null, head: repeats(s, 'head', [{}, rude, {}]) },
    ],
    calibratedCriteria: calibrated,
  });
}

const entry = (model: string, both_fail: number): CriterionCalibration => ({
  criterion: POLITE,
  model,
  labels: 10 + both_fail,
  judge_errors: 0,
  n: 10 + both_fail,
  agreement: 1,
  kappa: 1,
  table: { both_pass: 10, judge_pass_human_fail: 0, judge_fail_human_pass: 0, both_fail },
  calibrated: true,
  why_not: [],
});

describe('uncalibrated judge expectations', () => {
  it('a critical judge failure on an uncalibrated criterion is regressed (WARN), and says why', () => {
    const r = report();
    const c = r.cases[0];
    expect(c.class).toBe('regressed');
    expect(r.verdict).toBe('WARN');
    expect(c.head!.expectations.polite).toMatchObject({ critical: true, uncalibrated: true, fail: 1 });
    expect(c.head!.expectations['refunded-once'].uncalibrated).toBeUndefined();
    expect(c.expectations_changed).toEqual([expect.objectContaining({ id: 'polite', uncalibrated: true })]);
    expect(c.reason).toBe(
      'Critical expectation polite failed in 1 of 3 head repeats and passed in all 3 base repeats; its judge criterion is uncalibrated for this judge model, so it warns instead of blocking.',
    );
    expect(renderMarkdown(r)).toContain('`polite` (critical, judge uncalibrated');
    expect(renderTerminal(r)).toContain('polite (critical, judge uncalibrated');
    expect(renderSideTable(r)).toContain('polite (critical, judge uncalibrated)');
    expect(renderJunit(r)).toContain('polite (critical, judge uncalibrated');
  });

  it('a new scenario (no base) is regressed too, not a new critical failure', () => {
    const c = report(undefined, false).cases[0];
    expect(c.class).toBe('regressed');
    expect(c.reason).toMatch(
      /^New scenario \(no base run\): critical expectation polite failed .* so it warns instead of blocking\.$/,
    );
  });

  it('a calibrated criterion blocks as any critical expectation', () => {
    const r = report([POLITE]);
    expect(r.cases[0].class).toBe('new-critical-failure');
    expect(r.verdict).toBe('BLOCK');
    expect(r.cases[0].head!.expectations.polite.uncalibrated).toBeUndefined();
    expect(r.cases[0].reason).not.toContain('uncalibrated');
  });

  it('a calibration counts for its own model only, and by its table, not its flag', () => {
    const criteria = [entry('big', 10), entry('small', 9)];
    expect(calibratedCriteria(criteria, 'big')).toEqual([POLITE]);
    // 19 labels: the stored flag says calibrated, the rule says not.
    expect(calibratedCriteria(criteria, 'small')).toEqual([]);
    expect(calibratedCriteria(criteria, 'other')).toEqual([]);
    expect(calibratedCriteria(null, 'big')).toEqual([]);
  });

  it('merge keeps the calibration of its shards and refuses shards judged against different ones', () => {
    const shard = (index: number, sha256: string) => ({
      ...report(),
      shard: { index, total: 2 },
      judge_calibration: { model: 'big', file: 'judge-calibration.json', sha256, calibrated: [] },
    });
    const same = tryMergeReports([shard(1, 'a'), { ...shard(2, 'a'), cases: [] }]);
    expect(same.ok && same.report.judge_calibration?.sha256).toBe('a');
    const other = tryMergeReports([shard(1, 'a'), { ...shard(2, 'b'), cases: [] }]);
    expect(!other.ok && other.error).toMatch(/used another judge calibration/);
  });
});
