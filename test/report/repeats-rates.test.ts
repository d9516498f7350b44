// The repeats line of the report: the policy in force with its exact error rates, and the warning
// when a fixed N meets flakiness that makes it block unchanged agents more than 5% of the time.
import { describe, expect, it } from 'vitest';
import { mergeReports } from '../../src/compare/merge.js';
import { repeatsFacts } from '../../src/compare/repeats-facts.js';
import { compareSuite } from '../../src/compare/suite.js';
import { DEFAULT_REPEATS } from '../../src/config/schema.js';
import type { Report } from '../../src/model/report.js';
import { mdText } from '../../src/report/escape.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { renderTerminal } from '../../src/report/terminal.js';
import { validateReport } from '../../src/run/read-report.js';
import { LOOK_ALPHA } from '../../src/stats/sequential.js';
import { passing, repeats, scenario } from '../compare/builders.js';

const facts = {
  pin: { suite_hash: 'a'.repeat(64), template_hash: 'b'.repeat(64), scenarios: {} },
  sides: { base: { ref: 'main', sha: null }, head: { ref: 'pr', sha: null } },
  engine: 'postgres' as const,
};
const refund = scenario('refund', [{ id: 'refunded_once', critical: true }]);
const fails = (n: number, which: number[]) =>
  Array.from({ length: n }, (_, i) =>
    which.includes(i) ? { verdicts: { refunded_once: 'fail' as const } } : {},
  );

/** A fixed-N report as compare writes it: the repeats facts put in from the report's own numbers. */
function fixedReport(base: number[], head: number[], n = 5): Report {
  const r = compareSuite({
    ...facts,
    repeats: n,
    cases: [
      {
        scenario: refund,
        base: repeats(refund, 'base', fails(n, base)),
        head: repeats(refund, 'head', fails(n, head)),
      },
    ],
  });
  return Object.assign(r, repeatsFacts(r));
}

describe('a fixed N', () => {
  it('warns when the base failed 1 of 5: at N=5 an unchanged agent that flaky is blocked 22% of the time', () => {
    const r = fixedReport([2], []);
    expect(r.repeats_warning).toEqual({
      scenario: 'refund',
      side: 'base',
      expectation: 'refunded_once',
      fails: 1,
      runs: 5,
      false_block: expect.closeTo(0.2203, 4),
    });
    const line =
      'Warning: the base failed refunded_once in 1 of 5 repeats of refund: at N=5 an unchanged agent this flaky is blocked 22% of the time; use repeats: {min: 7, max: 32}.';
    expect(renderTerminal(r)).toContain(line);
    // Escaped for markdown: the braces of the suggestion, and anything in the ids.
    expect(renderMarkdown(r)).toContain(`**${mdText(line)}**`);
  });

  it('warns on the BLOCK a single flaky head failure makes: the verdict may be noise', () => {
    const r = fixedReport([], [3]);
    expect(r.verdict).toBe('BLOCK');
    expect(r.repeats_warning).toMatchObject({ side: 'head', fails: 1, runs: 5 });
  });

  it('does not warn when the sides disagree without flakiness, or at an N where the rate is under 5%', () => {
    expect(fixedReport([], [0, 1, 2, 3, 4]).repeats_warning).toBeUndefined();
    // 10 of 20 at N=20: an unchanged agent failing half its runs is blocked (1 - 0.5^20) 0.5^20, about 0.
    expect(fixedReport([...Array(10).keys()], [], 20).repeats_warning).toBeUndefined();
  });

  it('states the policy and its rates in one line, and says the targets are missed', () => {
    const r = fixedReport([], [], 3);
    expect(r.repeats_rates).toMatchObject({
      min: 3,
      max: 3,
      adaptive: false,
      default: false,
      meets_targets: false,
    });
    expect(renderTerminal(r)).toContain(
      'Repeats: fixed, 3 per side. False BLOCK of an unchanged agent failing 0% / 5% / 20% of runs: 0% / 12.2% / 25.0%; detection of 0% → 30% 65.7%, 5% → 40% 67.2%; misses the targets (false BLOCK ≤ 5%, detection ≥ 90%) the default {min: 7, max: 32} meets.',
    );
  });
});

describe('the default', () => {
  it('says it is the default and meets the targets, and report.json carries the rates', () => {
    const r = compareSuite({
      ...facts,
      repeats: DEFAULT_REPEATS.min,
      sequential: { ...DEFAULT_REPEATS },
      cases: [{ scenario: refund, base: passing(refund, 'base', 7), head: passing(refund, 'head', 7) }],
    });
    Object.assign(r, repeatsFacts(r));
    expect(r.repeats_rates).toMatchObject({
      min: 7,
      max: 32,
      adaptive: true,
      default: true,
      meets_targets: true,
    });
    expect(r.repeats_warning).toBeUndefined();
    expect(renderMarkdown(r)).toMatch(
      /Repeats: adaptive, 7 to 32 per side \(the default\)\. False BLOCK .* meets the targets/,
    );
    expect(validateReport(JSON.parse(JSON.stringify(r)), 'report.json').repeats_rates).toEqual(
      r.repeats_rates,
    );
  });

  it('says nothing about error rates for a head-only run: there is nothing to compare', () => {
    const r = compareSuite({
      ...facts,
      sides: { base: null, head: facts.sides.head },
      repeats: 5,
      cases: [{ scenario: refund, base: null, head: repeats(refund, 'head', fails(5, [1])) }],
    });
    expect(repeatsFacts(r)).toEqual({});
  });
});

describe('report.json from elsewhere', () => {
  it('refuses unknown fields in the repeats facts', () => {
    const r = JSON.parse(JSON.stringify(fixedReport([2], [])));
    r.repeats_rates.note = 'x';
    expect(() => validateReport(r, 'shard.json')).toThrow(/repeats_rates/);
  });

  it('recomputes the rates on merge instead of believing a shard that says its N=1 never errs', () => {
    const forged = JSON.parse(JSON.stringify(fixedReport([], [], 1)));
    forged.repeats_rates.false_block = forged.repeats_rates.false_block.map((f: { fails: number }) => ({
      ...f,
      rate: 0,
    }));
    forged.repeats_rates.meets_targets = true;
    const merged = mergeReports([validateReport(forged, 'shard.json')]);
    expect(merged.repeats_rates?.meets_targets).toBe(false);
    expect(merged.repeats_rates?.false_block?.[1].rate).toBeCloseTo(0.0475, 4);
  });

  it('keeps the adaptive policy through a merge', () => {
    const r = compareSuite({
      ...facts,
      repeats: 7,
      sequential: { ...DEFAULT_REPEATS },
      cases: [{ scenario: refund, base: passing(refund, 'base', 7), head: passing(refund, 'head', 7) }],
    });
    const merged = mergeReports([r]);
    expect(merged.repeats_policy).toEqual({ min: 7, max: 32, alpha: LOOK_ALPHA });
    expect(merged.repeats_rates).toMatchObject({ adaptive: true, default: true });
  });
});
