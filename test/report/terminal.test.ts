import { describe, expect, it } from 'vitest';
import { compareSuite } from '../../src/compare/suite.js';
import { renderSideTable, renderTerminal } from '../../src/report/terminal.js';
import { repeats, scenario } from '../compare/builders.js';
import { facts, sampleReport } from './fixtures.js';

const ANSI = /\x1b\[\d+m/;

describe('renderTerminal', () => {
  const text = renderTerminal(sampleReport());

  it('says the verdict, its reasons and the counts first, without colour unless asked', () => {
    const lines = text.split('\n');
    expect(lines[0]).toBe('Stategate: BLOCK');
    expect(lines[1]).toBe('  blocks: 1 new-critical-failure (refund-timeout-after-mutation)');
    expect(text).toContain(
      '1 new critical failure, 1 regressed, 1 incomplete, 1 improved, 2 unchanged; 3 flaky',
    );
    expect(text).not.toMatch(ANSI);
    const colored = renderTerminal(sampleReport(), { color: true });
    expect(colored).toMatch(ANSI);
    expect(colored.replace(/\x1b\[\d+m/g, '')).toBe(text);
  });

  it('explains each changed case with the same evidence as the markdown', () => {
    const block = text.slice(
      text.indexOf('NEW CRITICAL FAILURE  refund-timeout-after-mutation'),
      text.indexOf('REGRESSED'),
    );
    expect(block).toContain(
      '  why       Critical expectation refunded-exactly-once failed in 2 of 5 head repeats',
    );
    expect(block).toContain(
      '  steps     At step 2 the base called get_refund_policy(order_id=ORD-1001); the head called refund_payment(amount=40, order_id=ORD-1001).',
    );
    expect(block).toContain('  state     orders[ORD-1001].refund_count: base 1, head 2');
    expect(block).toContain(
      '  broke     refunded-exactly-once (critical, STATE_MISMATCH): failed in 2 of 5 head repeats; passed in 5 of 5 base repeats',
    );
    expect(block).toContain(
      '  flaky     head: At step 2, after every repeat called lookup_order(order_id=ORD-1001) and got 200, 3 of 5 repeats',
    );
    expect(block).toContain(
      '  head      all-N no, 3 of 5 · 60% (23%–88%) per run · pass@5 100%, pass^5 0% · 3.6 calls · 1.0 s · $0.0300 (claimed) · 2,700 in / 240 out tokens (claimed)',
    );
    expect(text).toContain('UNCHANGED  2 cases: happy-path, lookup-only');
  });
});

describe('renderSideTable', () => {
  it('shows all-N first, then passes out of N per expectation, for a single-side run', () => {
    const s = scenario('refund', [{ id: 'refunded-once', critical: true }, { id: 'polite' }]);
    const ok = scenario('lookup', [{ id: 'found' }]);
    const report = compareSuite({
      ...facts({ sides: { base: null, head: { ref: 'main', sha: null } } }),
      cases: [
        {
          scenario: s,
          base: null,
          head: repeats(s, 'head', [
            {},
            {
              verdicts: { 'refunded-once': 'fail' },
              labels: { 'refunded-once': 'DUPLICATE_EFFECT' },
              messages: { 'refunded-once': 'expected 1, got 2' },
            },
            {},
          ]),
        },
        { scenario: ok, base: null, head: repeats(ok, 'head', [{}, {}, {}]) },
      ],
    });
    expect(renderSideTable(report).split('\n')).toEqual([
      'ALL-N  PASSES  SCENARIO / EXPECTATION',
      'yes    3/3     lookup',
      '       3/3       completed (critical)',
      '       3/3       found',
      'no     2/3     refund',
      '       3/3       completed (critical)',
      '       2/3       refunded-once (critical)  DUPLICATE_EFFECT ×1: expected 1, got 2',
      '       3/3       polite',
      '',
    ]);
    const terminal = renderTerminal(report);
    expect(terminal).toContain('ALL-N  PASSES  SCENARIO / EXPECTATION');
    expect(terminal).toContain('head main alone');
  });
});
