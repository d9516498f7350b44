import { describe, expect, it } from 'vitest';
import { compareCase } from '../../src/compare/case.js';
import { firstDivergence } from '../../src/compare/divergence.js';
import { call, repeats, scenario } from './builders.js';

const lookup = () => call('lookup_order', { order_id: 'ORD-1001' });
const policy = () => call('get_refund_policy', { order_id: 'ORD-1001' });
const refund = (amount: number, o: Parameters<typeof call>[2] = {}) =>
  call('refund_payment', { order_id: 'ORD-1001', amount }, { mutated: true, ...o });

describe('firstDivergence', () => {
  it('different-tool names both steps', () => {
    const d = firstDivergence([lookup(), policy(), refund(40)], [lookup(), refund(40)]);
    expect(d).toEqual({
      kind: 'different-tool',
      step: 2,
      sentence:
        'At step 2 the base called get_refund_policy(order_id=ORD-1001); the head called refund_payment(amount=40, order_id=ORD-1001).',
    });
  });

  it('different-arguments names only the arguments that differ', () => {
    const d = firstDivergence([lookup(), refund(40)], [lookup(), refund(400)]);
    expect(d.kind).toBe('different-arguments');
    expect(d.step).toBe(2);
    expect(d.sentence).toBe(
      'At step 2 both sides called refund_payment with different arguments: base amount=40, head amount=400.',
    );
  });

  it('different-arguments with several keys, one of them missing on a side', () => {
    const d = firstDivergence(
      [call('send_email', { to: 'a@example.com', subject: 'Refund' })],
      [call('send_email', { to: 'b@example.com', subject: 'Refund', cc: 'boss@example.com' })],
    );
    expect(d.sentence).toBe(
      'At step 1 both sides called send_email with different arguments: base cc=(absent), to=a@example.com; head cc=boss@example.com, to=b@example.com.',
    );
  });

  it('different-result: same call, different status or effect', () => {
    const d = firstDivergence(
      [lookup(), refund(40)],
      [lookup(), refund(40, { status: 504, fault: 'timeout_after_mutation' })],
    );
    expect(d).toEqual({
      kind: 'different-result',
      step: 2,
      sentence:
        'At step 2 both sides called refund_payment(amount=40, order_id=ORD-1001); the base got 200 (applied), the head got 504 (applied, fault timeout_after_mutation).',
    });
    const replay = firstDivergence([refund(40)], [refund(40, { mutated: false, replay: true })]);
    expect(replay.sentence).toContain('the base got 200 (applied), the head got 200 (replayed)');
  });

  it('stopped-early says which side stopped and what the other did next', () => {
    const d = firstDivergence(
      [lookup(), policy(), refund(40), call('send_email', { to: 'c@example.com' })],
      [lookup(), policy(), refund(40)],
    );
    expect(d).toEqual({
      kind: 'stopped-early',
      step: 4,
      sentence: 'At step 4 the head stopped; the base called send_email(to=c@example.com).',
    });
    expect(firstDivergence([], [lookup()]).sentence).toBe(
      'At step 1 the base stopped; the head called lookup_order(order_id=ORD-1001).',
    );
  });

  it('same, with or without calls', () => {
    expect(firstDivergence([lookup(), refund(40)], [lookup(), refund(40)])).toEqual({
      kind: 'same',
      step: 0,
      sentence: 'Both sides made the same 2 calls with the same results.',
    });
    expect(firstDivergence([], []).sentence).toBe('Neither side called a tool.');
  });

  it('walks the calls in sequence order and renders arguments compactly, long values elided', () => {
    const long = 'x'.repeat(100);
    const a = call('note', { text: long, meta: { b: 1, a: [1, 2] } });
    const b = call('lookup_order', { order_id: 'ORD-1' });
    const first = { ...b, seq: 1 };
    const d = firstDivergence(
      [{ ...a, seq: 2 }, first],
      [first, call('note', { text: 'short text', meta: { a: [1, 2], b: 1 } })],
    );
    expect(d.kind).toBe('different-arguments');
    expect(d.step).toBe(2);
    expect(d.sentence).toBe(
      `At step 2 both sides called note with different arguments: base text=${'x'.repeat(39)}…, head text="short text".`,
    );
  });
});

describe('compareCase: representative episodes', () => {
  const s = scenario('refund', [{ id: 'refunded-once', critical: true }]);

  it('compares a passing base episode with a failing head episode', () => {
    const base = repeats(s, 'base', [
      { calls: [lookup(), policy()] },
      { calls: [lookup(), policy(), refund(40)] },
    ]);
    const head = repeats(s, 'head', [
      { calls: [lookup(), policy(), refund(40)] },
      { calls: [lookup(), refund(40), refund(40)], verdicts: { 'refunded-once': 'fail' } },
    ]);
    const c = compareCase(s, base, head);
    expect(c.class).toBe('new-critical-failure');
    expect(c.divergence?.sentence).toBe(
      'At step 2 the base called get_refund_policy(order_id=ORD-1001); the head called refund_payment(amount=40, order_id=ORD-1001).',
    );
  });

  it('for an improved case, a failing base episode beside a passing head episode', () => {
    const base = repeats(s, 'base', [
      { calls: [lookup()] },
      { calls: [refund(40)], verdicts: { 'refunded-once': 'fail' } },
    ]);
    const head = repeats(s, 'head', [{ calls: [lookup()] }, { calls: [lookup()] }]);
    const c = compareCase(s, base, head);
    expect(c.class).toBe('improved');
    expect(c.divergence?.sentence).toBe(
      'At step 1 the base called refund_payment(amount=40, order_id=ORD-1001); the head called lookup_order(order_id=ORD-1001).',
    );
  });

  it('explains nothing between the sides of an unchanged case or a new scenario', () => {
    const same = compareCase(
      s,
      repeats(s, 'base', [{ calls: [lookup()] }]),
      repeats(s, 'head', [{ calls: [policy()] }]),
    );
    expect(same.class).toBe('unchanged');
    expect(same.divergence).toBeNull();
    const fresh = compareCase(s, null, repeats(s, 'head', [{ verdicts: { 'refunded-once': 'fail' } }]));
    expect(fresh.divergence).toBeNull();
    expect(fresh.base).toBeNull();
  });
});
