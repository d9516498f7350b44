// The evidence a reviewer reads in report.md and the terminal, checked on hand-made cases: the reply
// and claimed outcome of a failing repeat, the error code beside a status, and state values cut
// around where they differ (a long e-mail whose difference comes late must show the difference).
import { describe, expect, it } from 'vitest';
import { compareSuite } from '../../src/compare/suite.js';
import { statePair } from '../../src/report/format.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { renderTerminal } from '../../src/report/terminal.js';
import { call, repeats, scenario } from '../compare/builders.js';
import { facts, regressedCase } from './fixtures.js';

const BASE_BODY =
  'We have refunded $35.00 for order ORD-1101 to your original payment method. It can take 5-10 business days to appear on your statement.';
const HEAD_BODY =
  'We have refunded $35.00 for order ORD-1101 to your original payment method (refund 2). It can take 5-10 business days to appear on your statement.';

describe('statePair', () => {
  it('cuts both values to the same window around where they differ', () => {
    const [base, head] = statePair(BASE_BODY, HEAD_BODY);
    expect(head).toContain('(refund 2)');
    expect(base).toContain('payment method. It can');
    // The same start on both sides, so the eye lines them up.
    expect(base.slice(0, 20)).toBe(head.slice(0, 20));
    expect(base.startsWith('…')).toBe(true);
    expect(Array.from(head).length).toBeLessThanOrEqual(61);
  });

  it('keeps short values whole, and a long value that differs early from its start', () => {
    expect(statePair(1, 2)).toEqual(['1', '2']);
    expect(statePair({ a: 1 }, null)).toEqual(['{"a":1}', 'null']);
    const [a, b] = statePair(`A${'x'.repeat(100)}`, `B${'x'.repeat(100)}`);
    expect(a.startsWith('Ax')).toBe(true);
    expect(b.startsWith('Bx')).toBe(true);
    expect(a.endsWith('…')).toBe(true);
  });
});

describe('a failing repeat in report.md and the terminal', () => {
  const s = scenario('book-slot', [{ id: 'booked', critical: true }], 'Books the 10:00 slot.');
  const taken = call('book_slot', { slot: '10:00' }, { status: 409 });
  taken.error = { code: 'SLOT_TAKEN', message: 'The slot is taken.' };
  const reply = 'Sorry, that slot is taken. </details><img src=x onerror=alert(1)> @team';
  const report = compareSuite({
    ...facts(),
    cases: [
      {
        scenario: s,
        base: repeats(s, 'base', [{ calls: [call('book_slot', { slot: '10:00' })] }]),
        head: repeats(s, 'head', [
          {
            calls: [taken],
            verdicts: { booked: 'fail' },
            agent: { result: { reply, outcome: 'FAILURE' } },
          },
        ]),
      },
    ],
  });

  it('keeps the reply, the claimed outcome and the error code in report.json', () => {
    const steps = report.cases[0].steps;
    expect(steps?.head).toMatchObject({ outcome: 'failed', reply, claimed: 'FAILURE' });
    expect(steps?.head.steps[0]).toMatchObject({ status: 409, code: 'SLOT_TAKEN' });
    // A passing base's reply is kept too, for the page; the markdown shows only the failing one.
    expect(steps?.base?.reply).toBe('Done.');
  });

  it('shows the failing reply with its outcome, escaped, and the code beside the status', () => {
    const md = renderMarkdown(report);
    const line = md
      .split('\n')
      .find((l) => l.startsWith('**Reply, head repeat 1 (failed) replied, claiming FAILURE:**'));
    expect(line).toBeDefined();
    expect(line).toContain('Sorry, that slot is taken.');
    expect(line).not.toContain('<img');
    expect(line).not.toContain('</details>');
    expect(md).not.toContain('**Reply, base');
    expect(md).toContain('409 SLOT_TAKEN');
    const term = renderTerminal(report, { color: false });
    expect(term).toContain('head repeat 1 (failed) replied, claiming FAILURE: Sorry, that slot is taken.');
    expect(term).toContain('409 SLOT_TAKEN');
  });
});

describe('failure signatures', () => {
  it('are each explained where they are listed, other included', () => {
    const s = scenario('reply-only', [{ id: 'polite', reply_contains: 'thanks' }]);
    const report = compareSuite({
      ...facts(),
      cases: [
        {
          scenario: s,
          base: repeats(s, 'base', [{}]),
          head: repeats(s, 'head', [{ verdicts: { polite: 'fail' } }]),
        },
      ],
    });
    expect(report.signatures?.head).toEqual({ other: 1 });
    const md = renderMarkdown(report);
    expect(md).toContain('head failures by signature: other 1');
    expect(md).toContain(
      'other: a failure none of the above names (call order, call counts, retries, the claimed outcome, the reply, the judge)',
    );
    expect(renderTerminal(report, { color: false })).toContain('other: a failure none of the above names');
  });
});

describe('ignored columns in report.md and the terminal', () => {
  it('are named on one line, through the escaper', () => {
    const report = compareSuite({ ...facts(), cases: [regressedCase('audited')] });
    const c = report.cases[0];
    expect(c.class).not.toBe('unchanged');
    // As report.json may carry it from a merge: a hostile name renders as text.
    c.ignored_columns = ['audit_log.at', 'x.`<b>y</b>`'];
    const md = renderMarkdown(report);
    const line = md.split('\n').find((l) => l.startsWith('Ignored columns'));
    // In a code span that no backtick of the name can close, so the tag is shown, not rendered.
    expect(line).toBe('Ignored columns (differ, not shown): `audit_log.at`, `` x.`<b>y</b>` ``');
    expect(renderTerminal(report)).toMatch(/ignored columns.*audit_log\.at, x\./);
  });
});
