import { describe, expect, it } from 'vitest';
import { compareSuite } from '../../src/compare/suite.js';
import { COMMENT_MARKER, MARKDOWN_LIMITS, renderMarkdown } from '../../src/report/markdown.js';
import { mdCode, mdText } from '../../src/report/markdown-text.js';
import { repeats, scenario } from '../compare/builders.js';
import {
  facts,
  incompleteCase,
  regressedCase,
  sampleReport,
  timeoutCase,
  unchangedCase,
} from './fixtures.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('renderMarkdown', () => {
  const md = renderMarkdown(sampleReport());

  // The layout of a full report (the marker, the verdict, the reasons, the counts, each case's
  // evidence in order, the folded rest) is compared byte for byte in golden.test.ts.
  it('starts with the hidden marker, then the verdict', () => {
    const lines = md.split('\n');
    expect(lines[0]).toBe(COMMENT_MARKER);
    expect(lines[1]).toBe('## Stategate: BLOCK');
    expect(md).not.toContain('Trimmed');
  });

  it('renders the same content for the check run and the job summary, without the marker', () => {
    const check = renderMarkdown(sampleReport(), { variant: 'check' });
    const summary = renderMarkdown(sampleReport(), { variant: 'summary' });
    expect(check.startsWith('## Stategate: BLOCK')).toBe(true);
    expect(check).toBe(summary);
    expect(md).toBe(`${COMMENT_MARKER}\n${check}`);
  });

  it('says PASS plainly', () => {
    const pass = renderMarkdown(compareSuite({ ...facts(), cases: [unchangedCase('a')] }));
    expect(pass).toContain('## Stategate: PASS\n\nNo case matched the gate.');
    expect(pass).not.toContain('### Blocking');
  });

  it('escapes what the agent and the records say: no HTML, no marker, no mentions, no broken tables', () => {
    const s = scenario('hostile', [{ id: 'reply-ok', critical: true }]);
    const evil = 'Thanks @octocat! <!-- stategate:comment --> <img src=x> a | b\nnext *line*';
    const report = compareSuite({
      ...facts(),
      cases: [
        {
          scenario: s,
          base: repeats(s, 'base', [{}]),
          head: repeats(s, 'head', [{ verdicts: { 'reply-ok': 'fail' }, messages: { 'reply-ok': evil } }]),
        },
      ],
    });
    const out = renderMarkdown(report);
    expect(out.split(COMMENT_MARKER).length).toBe(2);
    expect(out).not.toContain('<img');
    expect(out).not.toContain('@octocat');
    expect(out).toContain(
      'Thanks @\u200boctocat\\! &lt;\\!-- stategate:comment --&gt; &lt;img src=x&gt; a \\| b next \\*line\\*',
    );
    expect(mdText('a_b _c_ snake_case')).toBe('a_b \\_c\\_ snake_case');
    expect(mdCode('a `b` c')).toBe('``a `b` c``');
  });
});

describe('renderMarkdown: trimming', () => {
  // 2,000 cases: 20 new critical failures, 180 regressions, 1,800 unchanged.
  const big = compareSuite({
    ...facts(),
    cases: Array.from({ length: 2000 }, (_, i) => {
      const id = `case-${String(i).padStart(4, '0')}`;
      if (i < 20) return timeoutCase(id);
      if (i < 200) return regressedCase(id);
      return unchangedCase(id);
    }),
  });

  it('stays under the comment limit, keeps the verdict and the blocking cases, and says what was cut', () => {
    const out = renderMarkdown(big, { variant: 'comment' });
    expect(bytes(out)).toBeLessThanOrEqual(MARKDOWN_LIMITS.comment);
    expect(out.startsWith(`${COMMENT_MARKER}\n## Stategate: BLOCK`)).toBe(true);
    expect(out).toContain(
      '**20 new critical failure, 180 regressed, 0 incomplete, 0 improved, 1,800 unchanged; 200 flaky**',
    );
    expect(out).toContain('#### `case-0000`: new critical failure, flaky head');
    expect(out).toContain('**Trajectories:** At step 2 the base called get_refund_policy');
    const notice = out.split('\n').find((l) => l.startsWith('**Trimmed**'));
    expect(notice).toMatch(
      /^\*\*Trimmed\*\* to fit the 60,000-character limit of the PR comment: \d+ cases are shown in one line, 1,[0-9]{3} other cases are not listed\. The full report is in report\.html \(base and head side by side/,
    );
    // Every changed case is still named, at least in one line.
    for (const id of ['case-0019', 'case-0020', 'case-0199']) expect(out).toContain(`\`${id}\``);
    expect(out).not.toContain('`case-1999`');
  });

  it('stays under the check-run limit too, which is larger', () => {
    const check = renderMarkdown(big, { variant: 'check' });
    const comment = renderMarkdown(big, { variant: 'comment' });
    expect(bytes(check)).toBeLessThanOrEqual(MARKDOWN_LIMITS.check);
    expect(bytes(check)).toBeGreaterThan(bytes(comment) - COMMENT_MARKER.length);
    expect(check).toContain('limit of the check run');
  });

  it('cuts folded rows before details of changed cases', () => {
    const mixed = compareSuite({
      ...facts(),
      cases: [
        timeoutCase('a-blocking'),
        regressedCase('b-regressed'),
        incompleteCase('c-incomplete'),
        ...Array.from({ length: 400 }, (_, i) => unchangedCase(`z-${i}`)),
      ],
    });
    const full = renderMarkdown(mixed, { limit: 1_000_000 });
    const limit = bytes(full) - 5_000;
    const out = renderMarkdown(mixed, { limit });
    expect(bytes(out)).toBeLessThanOrEqual(limit);
    expect(out).toContain('#### `b-regressed`: regressed');
    expect(out).toContain('#### `c-incomplete`: incomplete');
    expect(out).toMatch(/\d+ other cases are not listed/);
    expect(out).toMatch(/\d+ more cases in report\.json\./);
  });

  it('never exceeds even a tiny limit', () => {
    const out = renderMarkdown(big, { limit: 2_000 });
    expect(bytes(out)).toBeLessThanOrEqual(2_000);
  });
});
