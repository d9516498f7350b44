// What report.html marks as different, checked on hand-made inputs: the first step two repeats do not
// share, the part of two values that differs (a long common text never hides it), the rows two
// repeats changed, and the cuts that keep the page small.
import { describe, expect, it } from 'vitest';
import type { RowChange } from '../../src/model/episode.js';
import {
  defaultRepeat,
  firstStepDifference,
  pairRows,
  splitDifference,
} from '../../src/report/html/viewer/differences.js';
import {
  type CallView,
  cutText,
  cutValue,
  episodeView,
  ITEMS,
  VALUE_CHARS,
} from '../../src/report/html/viewer-data.js';
import { call, episode, scenario } from '../compare/builders.js';

const step = (tool: string, args: unknown = {}, o: Partial<CallView> = {}): CallView => ({
  seq: 1,
  tool,
  args,
  status: 200,
  effect: 'none',
  ...o,
});

describe('firstStepDifference', () => {
  it('is null for the same calls, and the index of the first call that differs in tool, arguments, status, code, fault or effect', () => {
    const a = [step('lookup'), step('refund', { amount: 40 })];
    expect(firstStepDifference(a, [step('lookup'), step('refund', { amount: 40 })])).toBeNull();
    expect(firstStepDifference(a, [step('lookup'), step('policy')])).toBe(1);
    expect(firstStepDifference(a, [step('lookup'), step('refund', { amount: 41 })])).toBe(1);
    expect(firstStepDifference(a, [step('lookup', {}, { status: 404, code: 'ORDER_NOT_FOUND' }), a[1]])).toBe(
      0,
    );
    expect(firstStepDifference(a, [step('lookup', {}, { code: 'X' }), a[1]])).toBe(0);
    expect(firstStepDifference(a, [step('lookup', {}, { fault: 'delay' }), a[1]])).toBe(0);
    expect(firstStepDifference(a, [step('lookup', {}, { effect: 'applied' }), a[1]])).toBe(0);
  });

  it('counts one side stopping early as a difference at the step it did not make', () => {
    expect(firstStepDifference([step('lookup')], [step('lookup'), step('refund')])).toBe(1);
    expect(firstStepDifference([], [step('lookup')])).toBe(0);
    expect(firstStepDifference([], [])).toBeNull();
  });
});

describe('splitDifference', () => {
  it('marks the real difference of the demo email, far past where a fixed cut would stop', () => {
    const pad = 'x'.repeat(300);
    const base = `${pad}We have refunded $35.00 for order ORD-1101 to your original payment method. It can take 5-10 days.`;
    const head = `${pad}We have refunded $35.00 for order ORD-1101 to your original payment method (refund 2). It can take 5-10 days.`;
    const s = splitDifference(base, head);
    expect(s.a).toBe('');
    expect(s.b).toBe(' (refund 2)');
    expect(s.prefix + s.a + s.suffix).toBe(base);
    expect(s.prefix + s.b + s.suffix).toBe(head);
  });

  it('never lets prefix and suffix overlap (repeated characters)', () => {
    const s = splitDifference('aaa', 'aaaa');
    expect(s).toEqual({ prefix: 'aaa', a: '', b: 'a', suffix: '' });
    expect(splitDifference('abc', 'abc')).toEqual({ prefix: 'abc', a: '', b: '', suffix: '' });
    expect(splitDifference('1', '2')).toEqual({ prefix: '', a: '1', b: '2', suffix: '' });
  });
});

describe('pairRows', () => {
  const change = (
    op: RowChange['op'],
    key: Record<string, unknown>,
    after: Record<string, unknown>,
  ): RowChange => ({
    table: 'orders',
    op,
    key,
    after,
  });

  it('matches rows by table, operation and key, and marks only the columns that differ', () => {
    const pairs = pairRows(
      [change('update', { id: 'ORD-1' }, { id: 'ORD-1', refund_count: 1, total: 120 })],
      [change('update', { id: 'ORD-1' }, { id: 'ORD-1', refund_count: 2, total: 120 })],
    );
    expect(pairs).toHaveLength(1);
    expect(pairs[0].key).toBe('ORD-1');
    expect(pairs[0].columns.filter((c) => c.differs).map((c) => [c.column, c.base, c.head])).toEqual([
      ['refund_count', '1', '2'],
    ]);
  });

  it('lists a change only one repeat made as differing, on its side', () => {
    const pairs = pairRows([], [change('insert', { id: 2 }, { id: 2, amount: '35.00' })]);
    expect(pairs.map((p) => [p.base, p.head !== null, p.differs])).toEqual([[null, true, true]]);
  });
});

describe('defaultRepeat', () => {
  it("shows the head's first failing repeat against the base's first passing one", () => {
    expect(defaultRepeat(['pass', 'fail', 'fail'], 'head')).toBe(1);
    expect(defaultRepeat(['pass', 'error'], 'head')).toBe(1);
    expect(defaultRepeat(['fail', 'pass'], 'base')).toBe(1);
    expect(defaultRepeat(['pass', 'pass'], 'head')).toBe(0);
  });
});

describe('episodeView', () => {
  const s = scenario('refund-twice', [{ id: 'once', critical: true }]);

  it('marks a second applied call with the same effect, and not an idempotent replay', () => {
    const args = { amount: 40, order_id: 'ORD-1' };
    const calls = [
      call('refund_payment', args, { mutated: true, status: 504, fault: 'timeout_after_mutation' }),
      call('refund_payment', args, { mutated: true, replay: true }),
      call('refund_payment', args, { mutated: true }),
    ];
    const view = episodeView(episode(s, 'head', 1, { calls }));
    expect(view.calls.map((c) => [c.effect, c.same_effect_as])).toEqual([
      ['applied', undefined],
      ['replayed', undefined],
      ['applied', 1],
    ]);
  });

  it('cuts long strings, long lists and long stderr, and says how much it left out', () => {
    const long = 'y'.repeat(VALUE_CHARS + 10);
    expect(cutText(long, VALUE_CHARS)).toBe(`${'y'.repeat(VALUE_CHARS)}… (10 more characters)`);
    const list = cutValue(Array.from({ length: ITEMS + 3 }, (_, i) => i)) as unknown[];
    expect(list).toHaveLength(ITEMS + 1);
    expect(list.at(-1)).toBe('… (3 more items)');
    const calls = Array.from({ length: ITEMS + 2 }, () => call('lookup_order', { note: long }));
    const view = episodeView(
      episode(s, 'head', 1, { calls, agent: { stderr: `first\n${'z'.repeat(5000)}\nlast line` } }),
    );
    expect(view.calls).toHaveLength(ITEMS);
    expect(view.cut).toEqual({ calls: 2 });
    expect((view.calls[0].args as { note: string }).note).toContain('(10 more characters)');
    expect(view.stderr?.endsWith('last line')).toBe(true);
    expect(view.stderr?.startsWith('…')).toBe(true);
  });

  it('keeps conversation turns and model calls when the record has them', () => {
    const e = episode(s, 'head', 1);
    Object.assign(e.record, {
      turns: [{ role: 'user', text: 'hi' }],
      model_calls: [{ model: 'm', status: 200 }],
    });
    const view = episodeView(e);
    expect(view.turns).toEqual([{ role: 'user', text: 'hi' }]);
    expect(view.model_calls).toEqual([{ model: 'm', status: 200 }]);
  });
});
