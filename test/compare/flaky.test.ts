import { describe, expect, it } from 'vitest';
import { compareCase } from '../../src/compare/case.js';
import { explainFlaky } from '../../src/compare/flaky.js';
import { call, passing, repeats, scenario } from './builders.js';

const s = scenario('refund-by-email', [{ id: 'right-customer', critical: true }]);
const find = (matches: number) =>
  call(
    'lookup_customer',
    { email: 'pat@example.com' },
    { result: Array.from({ length: matches }, (_, i) => ({ id: `CUS-${i + 1}` })) },
  );
const refund = (customer: string) =>
  call('refund_payment', { customer_id: customer, amount: 40 }, { mutated: true });
const fail = {
  verdicts: { 'right-customer': 'fail' as const },
  labels: { 'right-customer': 'STATE_MISMATCH' as const },
};

describe('explainFlaky', () => {
  it('names the first step where passing and failing repeats fork', () => {
    const episodes = repeats(s, 'head', [
      { calls: [find(2), call('ask_user', { question: 'Which account?' })] },
      { calls: [find(2), refund('CUS-2')], ...fail },
      { calls: [find(2), call('ask_user', { question: 'Which account?' })] },
      { calls: [find(2), refund('CUS-2')], ...fail },
      { calls: [find(2), call('ask_user', { question: 'Which account?' })] },
    ]);
    expect(explainFlaky(episodes)).toBe(
      'At step 2, after every repeat called lookup_customer(email=pat@example.com) and got 2 results, 3 of 5 repeats called ask_user(question="Which account?") and got 200 and passed; the 2 failing ones called refund_payment(amount=40, customer_id=CUS-2) and got 200 (applied).',
    );
  });

  it('finds the fork after a shared prefix, with several actions on one side and a stop', () => {
    const episodes = repeats(s, 'head', [
      { calls: [find(1), refund('CUS-1')] },
      { calls: [find(2), refund('CUS-2')], ...fail },
      { calls: [find(2)], ...fail },
      { calls: [find(1), refund('CUS-1')] },
    ]);
    expect(explainFlaky(episodes)).toBe(
      'At step 1, 2 of 4 repeats called lookup_customer(email=pat@example.com) and got 1 result and passed; the 2 failing ones called lookup_customer(email=pat@example.com) and got 2 results.',
    );
    const later = repeats(s, 'head', [
      { calls: [find(1), refund('CUS-1')] },
      { calls: [find(1), refund('CUS-2')], ...fail },
      { calls: [find(1)], ...fail },
    ]);
    expect(explainFlaky(later)).toBe(
      // Same tool, so only the argument that differs is shown.
      'At step 2, after every repeat called lookup_customer(email=pat@example.com) and got 1 result, 1 of 3 repeats called refund_payment(customer_id=CUS-1, …) and got 200 (applied) and passed; the 2 failing ones: 1 called refund_payment(customer_id=CUS-2, …) and got 200 (applied), 1 stopped after 1 call.',
    );
  });

  it('counts each action when the passing repeats themselves differ at the fork', () => {
    const episodes = repeats(s, 'head', [
      { calls: [find(1), call('ask_user', { question: 'Which account?' })] },
      { calls: [find(1), call('escalate_to_human', {})] },
      { calls: [find(1), refund('CUS-2')], ...fail },
    ]);
    expect(explainFlaky(episodes)).toBe(
      'At step 2, after every repeat called lookup_customer(email=pat@example.com) and got 1 result, 2 of 3 repeats passed (1 called ask_user(question="Which account?") and got 200, 1 called escalate_to_human() and got 200); the failing one called refund_payment(amount=40, customer_id=CUS-2) and got 200 (applied).',
    );
  });

  it('says so when failing repeats made the same calls as passing ones, naming what they failed', () => {
    const same = repeats(s, 'head', [
      { calls: [find(1)] },
      { calls: [find(1)], ...fail },
      { calls: [find(1)] },
    ]);
    expect(explainFlaky(same)).toBe(
      'All 3 repeats made the same 1 call, yet 1 failed; they failed right-customer (STATE_MISMATCH).',
    );
    const some = repeats(s, 'head', [
      { calls: [find(1)] },
      { calls: [find(1)], ...fail },
      { calls: [find(2)], ...fail },
      { calls: [find(2)] },
    ]);
    expect(explainFlaky(some)).toBe(
      '2 of the 2 failing repeats made the same 1 call as a passing repeat; they failed right-customer (STATE_MISMATCH).',
    );
  });

  it('is null when the repeats agree, and ignores repeats that could not be graded', () => {
    expect(explainFlaky(passing(s, 'head', 3))).toBeNull();
    expect(
      explainFlaky(repeats(s, 'head', [{ infraError: { stage: 'sandbox', message: 'x' } }, {}])),
    ).toBeNull();
  });
});

describe('compareCase: flaky_explanation', () => {
  it('explains a flaky side beside its class', () => {
    const head = repeats(s, 'head', [{ calls: [find(1)] }, { calls: [find(2)], ...fail }]);
    const c = compareCase(s, passing(s, 'base', 2), head);
    expect(c.class).toBe('new-critical-failure');
    expect(c.flaky).toEqual({ base: false, head: true });
    expect(c.flaky_explanation).toEqual({
      head: 'At step 1, 1 of 2 repeats called lookup_customer(email=pat@example.com) and got 1 result and passed; the failing one called lookup_customer(email=pat@example.com) and got 2 results.',
    });
  });
});
