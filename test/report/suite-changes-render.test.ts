// Suite changes in every rendering: first after the verdict in the comment, the check summary and the
// terminal; weakening ones first; named in the verdict's reasons and the check title; kept by merge.
import { describe, expect, it } from 'vitest';
import { checkTitle } from '../../src/action/check-run.js';
import { mergeReports } from '../../src/compare/merge.js';
import { compareSuite } from '../../src/compare/suite.js';
import type { PolicySource, Report, SuiteChange } from '../../src/model/report.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { renderTerminal } from '../../src/report/terminal.js';
import { facts, unchangedCase } from './fixtures.js';

const CHANGES: SuiteChange[] = [
  { kind: 'scenario-added', subject: 'new-one', weakens: false, text: 'scenario new-one added' },
  { kind: 'scenario-removed', subject: 'refund-twice', weakens: true, text: 'scenario refund-twice removed' },
  {
    kind: 'scenario-edited',
    subject: 'happy-path',
    weakens: true,
    text: 'scenario happy-path: expectation <b>x</b> loosened: no longer critical @team',
  },
];

function report(
  changes: SuiteChange[] | undefined,
  gate = { block: ['new-critical-failure'], warn: [] as string[] },
  policy: PolicySource = { side: 'base', reason: "the base's stategate.yml" },
) {
  return compareSuite({
    ...facts({ gate, policyFrom: policy, suiteChanges: changes }),
    cases: [unchangedCase('happy-path'), unchangedCase('lookup')],
  });
}

describe('suite changes in the report', () => {
  it('a weakening makes an otherwise clean run WARN, or BLOCK when the gate blocks suite-weakened', () => {
    expect(report(undefined).verdict).toBe('PASS');
    expect(report(CHANGES.slice(0, 1)).verdict).toBe('PASS');
    expect(report(CHANGES).verdict).toBe('WARN');
    expect(report(CHANGES, { block: ['suite-weakened'], warn: [] }).verdict).toBe('BLOCK');
  });

  it('the comment and the check summary show the changes right after the verdict, escaped', () => {
    for (const variant of ['comment', 'check', 'summary'] as const) {
      const md = renderMarkdown(report(CHANGES), { variant });
      const lines = md.split('\n');
      const heading = lines.indexOf('## Stategate: WARN');
      expect(lines[heading + 2]).toBe(
        '- warns: suite weakened: scenario refund-twice removed; scenario happy-path: expectation &lt;b&gt;x&lt;/b&gt; loosened: no longer critical @\u200bteam',
      );
      const section = lines.indexOf('### Suite changes against the base: 3, 2 weaken the suite');
      expect(section).toBe(heading + 4);
      expect(lines.slice(section + 2, section + 5)).toEqual([
        '- **weakens:** scenario refund-twice removed',
        '- **weakens:** scenario happy-path: expectation &lt;b&gt;x&lt;/b&gt; loosened: no longer critical @\u200bteam',
        '- scenario new-one added',
      ]);
      expect(md).toContain("Gate policy from the base's stategate.yml.");
      expect(md.indexOf('### Suite changes')).toBeLessThan(md.indexOf('unchanged cases'));
      expect(md).not.toContain('<b>');
    }
  });

  it('without a base suite to compare, no section; a default policy is said and warns', () => {
    expect(renderMarkdown(report(undefined))).not.toContain('Suite changes');
    const fallback = report(undefined, undefined, {
      side: 'default',
      reason: "the base's stategate.yml could not be loaded (x)",
    });
    expect(fallback.verdict).toBe('WARN');
    const md = renderMarkdown(fallback);
    expect(md).toContain(
      "- warns: the built-in default policy gated this run: the base's stategate.yml could not be loaded (x)",
    );
    expect(md).toContain(
      "Gate policy: the built-in default, because the base's stategate.yml could not be loaded (x).",
    );
  });

  it('the terminal lists them after the reasons, weakening first', () => {
    const text = renderTerminal(report(CHANGES));
    const lines = text.split('\n');
    const title = lines.indexOf('Suite changes against the base: 3, 2 weaken the suite');
    expect(title).toBe(2);
    expect(lines.slice(title + 1, title + 5)).toEqual([
      '  weakens  scenario refund-twice removed',
      '  weakens  scenario happy-path: expectation <b>x</b> loosened: no longer critical @team',
      '  change   scenario new-one added',
      "Gate policy from the base's stategate.yml.",
    ]);
  });

  it('the check title says the suite was weakened', () => {
    expect(checkTitle(report(CHANGES))).toBe('WARN: suite weakened, 2 unchanged');
  });

  it('merge keeps the suite changes and the policy source of its shards, and refuses shards that disagree', () => {
    const shard = (r: Report, index: number, ids: string[]): Report => ({
      ...r,
      shard: { index, total: 2 },
      cases: r.cases.filter((c) => ids.includes(c.id)),
    });
    const whole = report(CHANGES);
    const merged = mergeReports([shard(whole, 1, ['happy-path']), shard(whole, 2, ['lookup'])]);
    expect(merged.suite_changes).toEqual(CHANGES);
    expect(merged.policy_from).toEqual(whole.policy_from);
    expect(merged.verdict).toBe('WARN');
    expect(() => mergeReports([shard(whole, 1, ['happy-path']), shard(report([]), 2, ['lookup'])])).toThrow(
      /other suite changes or another policy source/,
    );
  });
});
