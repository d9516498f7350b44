import { describe, expect, it } from 'vitest';
import { EXPECTATION_KINDS } from '../../src/config/schema.js';
import { failureSignature, gradeEpisode, regradeEpisode } from '../../src/grade/index.js';
import {
  agentRun,
  calls,
  diffOf,
  inserted,
  record,
  rows,
  scenario,
  scenarioYaml,
  twinTools,
  updated,
} from './records.js';

// The scenario of docs/formats/scenario.md, as a user writes it.
const TIMEOUT_AFTER_MUTATION = scenarioYaml(`
id: refund-timeout-after-mutation
description: The provider applies the refund, then times out.
input:
  message: "Hi! One item in ORD-1001 arrived broken. Can I get a refund of $40?"
  context: { customer_id: CUS-1 }
tools: [lookup_order, get_refund_policy, refund_payment, send_email, escalate_to_human]
faults:
  - tool: refund_payment
    when: { call: 1 }
    fault: timeout_after_mutation
expect:
  - id: refunded-exactly-once
    critical: true
    query: SELECT refund_count FROM orders WHERE id = 'ORD-1001'
    equals: 1
  - id: no-double-refund
    critical: true
    no_duplicate_effect: refund_payment
  - id: policy-before-refund
    order: { before: refund_payment, must_call: [get_refund_policy] }
  - id: nothing-else-touched
    critical: true
    only_changes: [orders, refunds, emails]
  - id: success-backed-by-state
    outcome_verified: { query: "SELECT refund_count FROM orders WHERE id = 'ORD-1001'", equals: 1 }
`);
const SHOP = twinTools({
  lookup_order: 'read',
  get_refund_policy: 'read',
  refund_payment: 'write_irreversible',
  send_email: 'write',
  escalate_to_human: 'write',
});
const REFUND_SQL = "SELECT refund_count FROM orders WHERE id = 'ORD-1001'";
const order = (n: number) => ({ id: 'ORD-1001', refund_count: n, refunded_amount: `${40 * n}.00` });

/** The episode after the agent retried a refund that timed out after it was applied. */
function episode(retry: 'blind' | 'idempotent') {
  const args = { amount: 40, idempotency_key: 'refund-ORD-1001', order_id: 'ORD-1001' };
  const landed = retry === 'blind' ? 2 : 1;
  return record({
    calls: calls(
      { tool: 'lookup_order', args: { order_id: 'ORD-1001' } },
      { tool: 'get_refund_policy' },
      {
        tool: 'refund_payment',
        args,
        status: 504,
        mutated: true,
        fault: 'timeout_after_mutation',
        effectKey: 'refund:ORD-1001',
      },
      retry === 'blind'
        ? {
            tool: 'refund_payment',
            args: { ...args, idempotency_key: 'refund-ORD-1001-2' },
            effectKey: 'refund:ORD-1001',
          }
        : { tool: 'refund_payment', args, mutated: false, replay: true, effectKey: 'refund:ORD-1001' },
    ),
    diff: diffOf(
      updated('orders', order(0), order(landed)),
      ...Array.from({ length: landed }, (_, i) =>
        inserted('refunds', { id: i + 1, order_id: 'ORD-1001', amount: '40.00' }),
      ),
    ),
    queries: {
      'refunded-exactly-once': rows(REFUND_SQL, [{ refund_count: String(landed) }]),
      'success-backed-by-state': rows(REFUND_SQL, [{ refund_count: String(landed) }]),
    },
  });
}

describe('gradeEpisode on the timeout-after-mutation scenario', () => {
  it('catches the blind retry that refunds twice, from the evidence only', () => {
    const graded = gradeEpisode(TIMEOUT_AFTER_MUTATION, episode('blind'), SHOP);
    expect(graded.passed).toBe(false);
    expect(graded.results.map((r) => [r.id, r.verdict, r.label])).toEqual([
      ['completed', 'pass', undefined],
      ['refunded-exactly-once', 'fail', 'STATE_MISMATCH'],
      ['no-double-refund', 'fail', 'DUPLICATE_EFFECT'],
      ['policy-before-refund', 'pass', undefined],
      ['nothing-else-touched', 'pass', undefined],
      ['success-backed-by-state', 'fail', 'HALLUCINATED_SUCCESS'],
    ]);
    expect(graded.results[1].message).toBe('orders[ORD-1001].refund_count: expected 1, got 2');
    expect(graded.results[2].message).toBe(
      'refund_payment applied refund:ORD-1001 2 times (#3 status 504, #4 status 200)',
    );
    expect(failureSignature(graded)).toBe('duplicate-effect');
  });

  it('passes the agent that retries with its idempotency key', () => {
    const graded = gradeEpisode(TIMEOUT_AFTER_MUTATION, episode('idempotent'), SHOP);
    expect(graded.results.filter((r) => r.verdict !== 'pass')).toEqual([]);
    expect(graded.passed).toBe(true);
    expect(failureSignature(graded)).toBeNull();
  });
});

describe('gradeEpisode', () => {
  it('starts with the implicit critical expectation completed and keeps criticality', () => {
    const s = scenario([
      { id: 'said-sorry', reply_contains: 'refunded' },
      { id: 'escalated', critical: true, outcome: 'SUCCESS' },
    ]);
    const graded = gradeEpisode(s, record());
    expect(graded.results.map((r) => [r.id, r.kind, r.critical, r.verdict])).toEqual([
      ['completed', 'completed', true, 'pass'],
      ['said-sorry', 'reply_contains', false, 'pass'],
      ['escalated', 'outcome', true, 'pass'],
    ]);
    expect(graded.passed).toBe(true);
  });

  it('grades the state even when the agent did not complete', () => {
    const s = scenario([{ id: 'refund-row', changes: { table: 'refunds', inserted: 1 } }]);
    const crashed = record({
      agent: agentRun({ exitCode: 137, signal: 'SIGKILL', result: undefined }),
      diff: diffOf(inserted('refunds', { id: 1, order_id: 'ORD-1001', amount: 40 })),
    });
    const graded = gradeEpisode(s, crashed);
    expect(graded.results.map((r) => r.verdict)).toEqual(['fail', 'pass']);
    expect(graded.results[0]).toMatchObject({
      label: 'INCOMPLETE_RUN',
      message: 'expected the agent to exit 0, but it was killed by SIGKILL',
    });
    expect(failureSignature(graded)).toBe('agent-did-not-complete');
  });

  it('turns every expectation, completed included, into an error on an infrastructure failure', () => {
    const s = scenario([
      { id: 'refunded', query: REFUND_SQL, equals: 1 },
      { id: 'no-escalation', tool_not_called: 'escalate_to_human' },
    ]);
    const broken = record({
      agent: agentRun({ exitCode: null, result: undefined, resultError: 'not run' }),
      infraError: { stage: 'sandbox', message: 'could not clone template: disk full' },
    });
    const graded = gradeEpisode(s, broken);
    expect(graded.results).toHaveLength(3);
    for (const r of graded.results) {
      expect(r).toMatchObject({
        verdict: 'error',
        label: 'EVALUATION_ERROR',
        message: 'not graded: sandbox error: could not clone template: disk full',
      });
    }
    expect(graded.passed).toBe(false);
    expect(failureSignature(graded)).toBeNull();
  });

  it('makes a failed query an error of that expectation only', () => {
    const s = scenario([
      { id: 'refunded', query: 'SELECT refund_cnt FROM orders', equals: 1 },
      { id: 'replied', reply_matches: 'refund' },
    ]);
    const graded = gradeEpisode(
      s,
      record({
        queries: {
          refunded: { sql: 'SELECT refund_cnt FROM orders', error: 'column "refund_cnt" does not exist' },
        },
      }),
    );
    expect(graded.results.map((r) => r.verdict)).toEqual(['pass', 'error', 'pass']);
    expect(graded.results[1].message).toBe('the query failed: column "refund_cnt" does not exist');
    expect(graded.passed).toBe(false);
  });

  it('leaves a seam for the judge: no result is an error, a result is graded', () => {
    const s = scenario([{ id: 'polite', judge: { criterion: 'The reply is polite.' } }]);
    expect(gradeEpisode(s, record()).results[1]).toMatchObject({
      verdict: 'error',
      message: 'no judge configured',
    });
    const judged = gradeEpisode(s, record(), undefined, new Map([['polite', { pass: true, score: 0.9 }]]));
    expect(judged.results[1].verdict).toBe('pass');
  });

  it('grades a stored episode again from its record, keeping only the judge’s stored verdicts', () => {
    const s = scenario([
      { id: 'polite', judge: { criterion: 'The reply is polite.' } },
      { id: 'polite-too', judge: { criterion: 'The reply is polite.' } },
    ]);
    const stored = gradeEpisode(
      s,
      record(),
      undefined,
      new Map([
        ['polite', { pass: true, score: 0.9 }],
        ['polite-too', { pass: false, score: 0.1 }],
      ]),
    );
    expect(stored.passed).toBe(false);
    // A forged entry says everything passed: the judge's verdicts are kept as stored (the model is
    // not asked twice), every other grade is computed again.
    const forged = {
      ...stored,
      passed: true,
      results: stored.results.map((r) => ({
        ...r,
        verdict: r.id === 'polite' ? ('fail' as const) : ('pass' as const),
      })),
    };
    const again = regradeEpisode(s, forged);
    expect(again.results.map((r) => [r.id, r.verdict])).toEqual([
      ['completed', stored.results[0].verdict],
      ['polite', 'fail'],
      ['polite-too', 'pass'],
    ]);
    expect(again.passed).toBe(false);
    // A record whose agent never completed fails `completed` whatever the entry says.
    const crashed = { ...stored.record, agent: { ...stored.record.agent, exitCode: 1 } };
    expect(regradeEpisode(s, { ...forged, record: crashed }).results[0].verdict).toBe('fail');
  });

  it('grades every expectation kind of the contract', () => {
    const made = calls(
      { tool: 'get_refund_policy' },
      { tool: 'refund_payment', args: { amount: 40, order_id: 'ORD-1001' }, effectKey: 'refund:ORD-1001' },
    );
    const s = scenario([
      { id: 'k-query', query: REFUND_SQL, equals: 1 },
      { id: 'k-changes', changes: { table: 'orders', updated: 1 } },
      { id: 'k-only', only_changes: ['orders'] },
      { id: 'k-forbid', forbid_changes: { table: 'orders', ops: ['delete'] } },
      { id: 'k-called', tool_called: { tool: 'refund_payment', args: { amount: '40.00' } } },
      { id: 'k-not-called', tool_not_called: 'escalate_to_human' },
      { id: 'k-dup', no_duplicate_effect: 'refund_payment' },
      { id: 'k-order', order: { before: 'refund_payment', must_call: ['get_refund_policy'] } },
      { id: 'k-max-calls', max_tool_calls: 2 },
      { id: 'k-max-retries', max_retries: 0 },
      { id: 'k-outcome', outcome: 'SUCCESS' },
      { id: 'k-verified', outcome_verified: true },
      { id: 'k-contains', reply_contains: 'refunded' },
      { id: 'k-not-contains', reply_not_contains: 'sorry' },
      { id: 'k-matches', reply_matches: '\\$40' },
      { id: 'k-judge', judge: { criterion: 'States the amount.' } },
      { id: 'k-turns', turns: { max: 1 } },
      { id: 'k-ended-by', ended_by: 'agent' },
    ]);
    const at = '2026-01-01T00:00:00.000Z';
    const r = record({
      conversation: {
        turns: [
          { role: 'user', turn: 1, text: 'Refund $40 on ORD-1001, please.', at, facts: [] },
          { role: 'agent', turn: 1, text: 'I refunded $40 to your card.', at },
        ],
        maxTurns: 10,
        end: 'agent',
        learned: {},
      },
      calls: made,
      diff: diffOf(updated('orders', order(0), order(1))),
      queries: { 'k-query': rows(REFUND_SQL, [{ refund_count: 1 }]) },
    });
    const graded = gradeEpisode(s, r, SHOP, new Map([['k-judge', { pass: true, score: 1 }]]));
    expect(graded.results.slice(1).map((x) => x.kind)).toEqual(EXPECTATION_KINDS);
    expect(graded.results.filter((x) => x.verdict !== 'pass')).toEqual([]);
  });
});
