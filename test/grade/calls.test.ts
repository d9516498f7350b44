import { describe, expect, it } from 'vitest';
import type { ExpectationOf } from '../../src/config/schema.js';
import { retriesOf } from '../../src/expectations/call-log.js';
import { gradeMaxRetries } from '../../src/expectations/kinds/max-retries.js';
import { gradeMaxToolCalls } from '../../src/expectations/kinds/max-tool-calls.js';
import { gradeNoDuplicateEffect } from '../../src/expectations/kinds/no-duplicate-effect.js';
import { gradeOrder } from '../../src/expectations/kinds/order.js';
import { gradeToolCalled } from '../../src/expectations/kinds/tool-called.js';
import { gradeToolNotCalled } from '../../src/expectations/kinds/tool-not-called.js';
import { calls, expectation } from './records.js';

const refundArgs = { amount: 40, idempotency_key: 'k1', order_id: 'ORD-1001' };
const toolCalled = (spec: Record<string, unknown>) =>
  expectation<ExpectationOf<'tool_called'>>({ tool_called: spec }).tool_called;

describe('tool_called', () => {
  const made = calls(
    { tool: 'lookup_order', args: { order_id: 'ORD-1001' } },
    { tool: 'refund_payment', args: refundArgs, status: 504, fault: 'timeout_before_mutation' },
    { tool: 'refund_payment', args: { ...refundArgs, amount: '40.00' } },
  );

  it('defaults to at least once and counts every recorded attempt, whatever its status', () => {
    const g = gradeToolCalled(toolCalled({ tool: 'refund_payment' }), made);
    expect(g).toMatchObject({ verdict: 'pass', expected: { min: 1 }, actual: 2 });
    expect(g.message).toBe('refund_payment was called 2 times');
  });

  it('fails below min as a missing effect', () => {
    const g = gradeToolCalled(toolCalled({ tool: 'send_email' }), made);
    expect(g).toMatchObject({ verdict: 'fail', label: 'MISSING_EFFECT', actual: 0 });
    expect(g.message).toBe('expected send_email called at least 1 time, got 0');
  });

  it('fails above max as too many calls, naming them', () => {
    const g = gradeToolCalled(toolCalled({ tool: 'refund_payment', max: 1 }), made);
    expect(g).toMatchObject({ verdict: 'fail', label: 'TOO_MANY_CALLS' });
    expect(g.message).toBe('expected refund_payment called exactly 1 time, got 2 (#2, #3)');
  });

  it('counts only calls whose arguments include the given values, by meaning', () => {
    expect(
      gradeToolCalled(toolCalled({ tool: 'refund_payment', args: { amount: 40 }, min: 2, max: 2 }), made)
        .verdict,
    ).toBe('pass');
    const g = gradeToolCalled(toolCalled({ tool: 'refund_payment', args: { amount: 120 } }), made);
    expect(g.message).toBe('expected refund_payment called at least 1 time with amount = 120, got 0');
    const none = gradeToolCalled(toolCalled({ tool: 'refund_payment', min: 0, max: 0 }), []);
    expect(none.verdict).toBe('pass');
  });
});

describe('tool_not_called', () => {
  it('passes when the tool was never called and fails naming the calls', () => {
    const made = calls({ tool: 'lookup_order' }, { tool: 'escalate_to_human', status: 403 });
    expect(gradeToolNotCalled('refund_payment', made).verdict).toBe('pass');
    expect(gradeToolNotCalled('escalate_to_human', made)).toMatchObject({
      verdict: 'fail',
      label: 'FORBIDDEN_CALL',
      message: 'expected escalate_to_human never called, got 1 call (#2)',
    });
  });
});

describe('no_duplicate_effect', () => {
  it('passes for one landed effect and ignores idempotent replays', () => {
    const made = calls(
      { tool: 'refund_payment', args: refundArgs, effectKey: 'refund:ORD-1001' },
      {
        tool: 'refund_payment',
        args: refundArgs,
        effectKey: 'refund:ORD-1001',
        mutated: false,
        replay: true,
      },
    );
    expect(gradeNoDuplicateEffect('refund_payment', made).verdict).toBe('pass');
  });

  it('fails when two calls applied the same effect key, even with different arguments', () => {
    const made = calls(
      { tool: 'refund_payment', args: refundArgs, effectKey: 'refund:ORD-1001' },
      {
        tool: 'refund_payment',
        args: { ...refundArgs, idempotency_key: 'k2' },
        effectKey: 'refund:ORD-1001',
      },
    );
    expect(gradeNoDuplicateEffect('refund_payment', made)).toMatchObject({
      verdict: 'fail',
      label: 'DUPLICATE_EFFECT',
      message: 'refund_payment applied refund:ORD-1001 2 times (#1 status 200, #2 status 200)',
    });
  });

  it('without an effect key, compares tool and canonical arguments', () => {
    const same = calls(
      { tool: 'send_email', args: { to: 'a@x', body: 'hi' } },
      { tool: 'send_email', args: { body: 'hi', to: 'a@x' } },
    );
    expect(gradeNoDuplicateEffect('send_email', same).message).toBe(
      'send_email applied send_email({"body":"hi","to":"a@x"}) 2 times (#1 status 200, #2 status 200)',
    );
    const different = calls(
      { tool: 'send_email', args: { to: 'a@x' } },
      { tool: 'send_email', args: { to: 'b@x' } },
    );
    expect(gradeNoDuplicateEffect('send_email', different).verdict).toBe('pass');
  });

  it('counts a timeout after mutation followed by a blind retry as a duplicate', () => {
    const made = calls(
      {
        tool: 'refund_payment',
        args: refundArgs,
        status: 504,
        mutated: true,
        fault: 'timeout_after_mutation',
      },
      { tool: 'refund_payment', args: refundArgs },
    );
    const g = gradeNoDuplicateEffect('refund_payment', made);
    expect(g.verdict).toBe('fail');
    expect(g.message).toContain('(#1 status 504, #2 status 200)');
  });

  it('does not count a timeout before mutation followed by a retry', () => {
    const made = calls(
      { tool: 'refund_payment', args: refundArgs, status: 504, fault: 'timeout_before_mutation' },
      { tool: 'refund_payment', args: refundArgs },
    );
    expect(gradeNoDuplicateEffect('refund_payment', made).verdict).toBe('pass');
  });
});

describe('order', () => {
  const spec = { before: 'refund_payment', must_call: ['lookup_order', 'get_refund_policy'] };

  it('passes when every must_call tool came first', () => {
    const made = calls({ tool: 'lookup_order' }, { tool: 'get_refund_policy' }, { tool: 'refund_payment' });
    expect(gradeOrder(spec, made).verdict).toBe('pass');
  });

  it('fails naming what came late or never', () => {
    const made = calls(
      { tool: 'lookup_order' },
      { tool: 'refund_payment' },
      { tool: 'get_refund_policy' },
      { tool: 'refund_payment' },
    );
    expect(gradeOrder(spec, made)).toMatchObject({
      verdict: 'fail',
      label: 'ORDER_VIOLATION',
      message:
        'expected get_refund_policy before refund_payment, but refund_payment was first called at #2 before get_refund_policy (first called at #3)',
    });
    const never = gradeOrder(
      { before: 'refund_payment', must_call: ['get_refund_policy'] },
      calls({ tool: 'refund_payment' }),
    );
    expect(never.message).toContain('before get_refund_policy (never called)');
  });

  it('passes vacuously, and says so, when `before` was never called', () => {
    const g = gradeOrder(spec, calls({ tool: 'lookup_order' }));
    expect(g.verdict).toBe('pass');
    expect(g.message).toBe('refund_payment was never called, so the order holds (vacuous)');
  });
});

describe('max_tool_calls and max_retries', () => {
  it('counts every recorded call against max_tool_calls', () => {
    const made = calls(
      { tool: 'lookup_order' },
      { tool: 'lookup_order', status: 500 },
      { tool: 'refund_payment' },
    );
    expect(gradeMaxToolCalls(3, made).verdict).toBe('pass');
    expect(gradeMaxToolCalls(2, made)).toMatchObject({
      verdict: 'fail',
      label: 'TOO_MANY_CALLS',
      message: 'expected at most 2 calls, got 3 (lookup_order x2, refund_payment x1)',
    });
  });

  it('calls a retry only a repeat of a failed call with the same arguments', () => {
    const made = calls(
      { tool: 'refund_payment', args: refundArgs, status: 429 },
      { tool: 'refund_payment', args: refundArgs, status: 0 },
      { tool: 'refund_payment', args: refundArgs },
      // After a success: not a retry.
      { tool: 'refund_payment', args: refundArgs },
      { tool: 'lookup_order', args: { order_id: 'A' }, status: 500 },
      // Different arguments after a failure: not a retry.
      { tool: 'lookup_order', args: { order_id: 'B' } },
    );
    expect(retriesOf(made).map((c) => c.seq)).toEqual([2, 3]);
    expect(gradeMaxRetries(2, made).verdict).toBe('pass');
    expect(gradeMaxRetries(1, made)).toMatchObject({
      verdict: 'fail',
      label: 'TOO_MANY_RETRIES',
      message: 'expected at most 1 retry, got 2 (refund_payment x2)',
    });
  });

  it('compares the previous call of the same tool, even with other tools between', () => {
    const made = calls(
      { tool: 'refund_payment', args: refundArgs, status: 503 },
      { tool: 'lookup_order', args: { order_id: 'ORD-1001' } },
      { tool: 'refund_payment', args: refundArgs },
    );
    expect(retriesOf(made).map((c) => c.seq)).toEqual([3]);
    expect(gradeMaxRetries(0, made).message).toBe('expected at most 0 retries, got 1 (refund_payment x1)');
  });
});
