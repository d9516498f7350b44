import { describe, expect, it } from 'vitest';
import { FAILURE_SIGNATURES, failureSignature, gradeEpisode } from '../../src/grade/index.js';
import type { EpisodeRecord } from '../../src/model/episode.js';
import { agentRun, calls, diffOf, inserted, record, rows, scenario, twinTools, updated } from './records.js';

const SHOP = twinTools({ lookup_order: 'read', refund_payment: 'write_irreversible', send_email: 'write' });
const COUNT_SQL = "SELECT refund_count FROM orders WHERE id = 'ORD-1001'";

function signatureOf(expect: unknown[], r: EpisodeRecord) {
  return failureSignature(gradeEpisode(scenario(expect), r, SHOP));
}

const refunded = (count: number) => ({ 'refund-count': rows(COUNT_SQL, [{ refund_count: count }]) });
const countIsOne = { id: 'refund-count', critical: true, query: COUNT_SQL, equals: 1 };

describe('failureSignature', () => {
  it('is null for a passing episode', () => {
    expect(signatureOf([countIsOne], record({ queries: refunded(1) }))).toBeNull();
  });

  it('names a run that did not complete first, whatever else failed', () => {
    const r = record({
      agent: agentRun({ timedOut: true, exitCode: null, result: undefined }),
      calls: calls({ tool: 'refund_payment', effectKey: 'r' }, { tool: 'refund_payment', effectKey: 'r' }),
    });
    expect(signatureOf([{ id: 'dup', no_duplicate_effect: 'refund_payment' }], r)).toBe(
      'agent-did-not-complete',
    );
  });

  it('puts a duplicate effect before a claimed success without effect', () => {
    const r = record({
      calls: calls(
        { tool: 'refund_payment', effectKey: 'r' },
        { tool: 'refund_payment', effectKey: 'r' },
        { tool: 'send_email', mutated: false },
      ),
    });
    const expect_ = [
      { id: 'verified', outcome_verified: true },
      { id: 'dup', no_duplicate_effect: 'refund_payment' },
    ];
    expect(signatureOf(expect_, r)).toBe('duplicate-effect');
    expect(signatureOf([expect_[0]], r)).toBe('success-claimed-without-effect');
  });

  it('names a tool error that was never recovered before extra or missing effects', () => {
    const failing = record({
      calls: calls({ tool: 'lookup_order' }, { tool: 'refund_payment', status: 500, fault: 'server_error' }),
      queries: refunded(0),
    });
    expect(signatureOf([countIsOne, { id: 'mail', tool_called: { tool: 'send_email' } }], failing)).toBe(
      'tool-error-not-recovered',
    );
    // The same failure after the tool answered a later call is not an unrecovered error.
    const recovered = record({
      calls: calls({ tool: 'refund_payment', status: 500 }, { tool: 'refund_payment' }),
      queries: refunded(1),
    });
    expect(signatureOf([countIsOne, { id: 'mail', tool_called: { tool: 'send_email' } }], recovered)).toBe(
      'missing-required-effect',
    );
  });

  it('names an extra effect before a missing one', () => {
    const r = record({
      calls: calls({ tool: 'refund_payment' }),
      diff: diffOf(updated('customers', { id: 'C', tier: 'gold' }, { id: 'C', tier: 'none' })),
    });
    const both = [
      { id: 'scope', only_changes: ['orders', 'refunds'] },
      { id: 'refund-row', changes: { table: 'refunds', inserted: 1 } },
    ];
    expect(signatureOf(both, r)).toBe('extra-effect');
    expect(signatureOf([both[1]], r)).toBe('missing-required-effect');
  });

  it('tells a state failure with no state-changing call from a wrong update', () => {
    const idle = record({ calls: calls({ tool: 'lookup_order' }), queries: refunded(0) });
    expect(signatureOf([countIsOne], idle)).toBe('no-state-changing-action');
    const wrong = record({
      calls: calls({ tool: 'refund_payment' }),
      diff: diffOf(inserted('refunds', { id: 1, amount: 400 })),
      queries: refunded(3),
    });
    expect(signatureOf([countIsOne], wrong)).toBe('wrong-state-update');
  });

  it('calls any other failure other', () => {
    const r = record({ agent: agentRun({ result: { reply: 'Done.', outcome: 'SUCCESS' } }) });
    expect(signatureOf([{ id: 'amount', reply_contains: '$40' }], r)).toBe('other');
  });

  it('is deterministic and one of the listed signatures', () => {
    const r = record({ calls: calls({ tool: 'refund_payment' }), queries: refunded(2) });
    const graded = gradeEpisode(scenario([countIsOne]), r, SHOP);
    const first = failureSignature(graded);
    expect(FAILURE_SIGNATURES).toContain(first);
    expect(failureSignature(structuredClone(graded))).toBe(first);
  });
});
