import { describe, expect, it } from 'vitest';
import { compareCase } from '../../src/compare/case.js';
import { stateDifferences } from '../../src/compare/state-diff.js';
import { emptyDiff, repeats, scenario, stateDiff, tableDiff } from './builders.js';

const order = (o: Record<string, unknown>) => ({
  id: 'ORD-1001',
  customer_id: 'CUS-1',
  total: 120,
  refund_count: 0,
  refunded_amount: 0,
  ...o,
});

describe('stateDifferences', () => {
  it('lists every final value that differs, keyed by primary key values', () => {
    const base = stateDiff(
      tableDiff(
        'orders',
        ['id'],
        [[{ id: 'ORD-1001' }, order({}), order({ refund_count: 1, refunded_amount: 40 })]],
      ),
      tableDiff('refunds', ['id'], [[{ id: 1 }, undefined, { id: 1, order_id: 'ORD-1001', amount: 40 }]]),
    );
    const head = stateDiff(
      tableDiff(
        'orders',
        ['id'],
        [[{ id: 'ORD-1001' }, order({}), order({ refund_count: 2, refunded_amount: 80 })]],
      ),
      tableDiff(
        'refunds',
        ['id'],
        [
          [{ id: 1 }, undefined, { id: 1, order_id: 'ORD-1001', amount: 40 }],
          [{ id: 2 }, undefined, { id: 2, order_id: 'ORD-1001', amount: 40 }],
        ],
      ),
    );
    const { differences, cut } = stateDifferences(base, head);
    expect(cut).toBe(0);
    expect(differences).toEqual([
      { table: 'orders', key: 'ORD-1001', column: 'refund_count', base: 1, head: 2 },
      { table: 'orders', key: 'ORD-1001', column: 'refunded_amount', base: 40, head: 80 },
      {
        table: 'refunds',
        key: '2',
        column: '(row)',
        base: '(absent)',
        head: { id: 2, order_id: 'ORD-1001', amount: 40 },
      },
    ]);
  });

  it('uses the initial value for a row only one side changed, and names rows one side deleted', () => {
    const base = stateDiff(
      tableDiff('customers', ['id'], [[{ id: 'CUS-1' }, { id: 'CUS-1', tier: 'silver' }, undefined]]),
    );
    const head = stateDiff(
      tableDiff(
        'orders',
        ['id'],
        [[{ id: 'ORD-1001' }, order({ status: 'paid' }), order({ status: 'refunded' })]],
      ),
    );
    expect(stateDifferences(base, head).differences).toEqual([
      {
        table: 'customers',
        key: 'CUS-1',
        column: '(row)',
        base: '(absent)',
        head: { id: 'CUS-1', tier: 'silver' },
      },
      { table: 'orders', key: 'ORD-1001', column: 'status', base: 'paid', head: 'refunded' },
    ]);
  });

  it('renders composite keys and finds nothing when both sides end alike', () => {
    const change = tableDiff(
      'lines',
      ['order_id', 'n'],
      [
        [
          { order_id: 'ORD-1', n: 2 },
          { order_id: 'ORD-1', n: 2, qty: 1 },
          { order_id: 'ORD-1', n: 2, qty: 3 },
        ],
      ],
    );
    expect(stateDifferences(stateDiff(change), emptyDiff()).differences).toEqual([
      { table: 'lines', key: 'ORD-1,2', column: 'qty', base: 3, head: 1 },
    ]);
    expect(stateDifferences(stateDiff(change), stateDiff(change)).differences).toEqual([]);
  });

  it('compares tables without a primary key as multisets of rows', () => {
    const row = { event: 'refund', order_id: 'ORD-1001' };
    const base = stateDiff(tableDiff('audit_log', null, [[null, undefined, row]]));
    const head = stateDiff(
      tableDiff('audit_log', null, [
        [null, undefined, row],
        [null, undefined, row],
      ]),
    );
    expect(stateDifferences(base, head).differences).toEqual([
      {
        table: 'audit_log',
        key: 'event=refund, order_id=ORD-1001',
        column: '(row)',
        base: '(absent)',
        head: row,
      },
    ]);
  });

  it('puts rows that critical expectations read first, then tables they read, then the rest, and caps the list', () => {
    const s = scenario('refund', [
      { id: 'refunded-once', critical: true, query: "SELECT refund_count FROM orders WHERE id = 'ORD-1001'" },
      { id: 'email-sent', critical: false, query: 'SELECT count(*) FROM emails' },
      { id: 'nothing-else', critical: true, only_changes: ['orders', 'emails', 'audit'] } as never,
    ]);
    const diffOf = (n: number) =>
      stateDiff(
        tableDiff('audit', ['id'], [[{ id: 1 }, { id: 1, n: 0 }, { id: 1, n }]]),
        tableDiff('customers', ['id'], [[{ id: 'CUS-1' }, { id: 'CUS-1', n: 0 }, { id: 'CUS-1', n }]]),
        tableDiff('emails', ['id'], [[{ id: 7 }, { id: 7, n: 0 }, { id: 7, n }]]),
        tableDiff(
          'orders',
          ['id'],
          [
            [{ id: 'ORD-0999' }, order({ id: 'ORD-0999' }), order({ id: 'ORD-0999', refund_count: n })],
            [{ id: 'ORD-1001' }, order({}), order({ refund_count: n })],
          ],
        ),
      );
    const { differences, cut } = stateDifferences(diffOf(1), diffOf(2), s);
    expect(differences.map((d) => `${d.table}[${d.key}].${d.column}`)).toEqual([
      'orders[ORD-1001].refund_count', // named by a critical query, key in its text
      'customers[CUS-1].n', // outside a critical only_changes list: the extra effect it catches
      'orders[ORD-0999].refund_count', // a table a critical query reads
      'emails[7].n', // read by a non-critical expectation
      'audit[1].n', // read by nothing
    ]);
    expect(cut).toBe(0);
    const capped = stateDifferences(diffOf(1), diffOf(2), s, 2);
    expect(capped.differences.map((d) => d.table)).toEqual(['orders', 'customers']);
    expect(capped.cut).toBe(3);
  });
});

describe('compareCase: state_diff', () => {
  it('takes the state of the representative episodes and records how many were cut', () => {
    const s = scenario('bulk', [{ id: 'ok', critical: true }]);
    const many = (v: number) =>
      stateDiff(
        tableDiff(
          'items',
          ['id'],
          Array.from(
            { length: 25 },
            (_, i) => [{ id: i }, { id: i, v: 0 }, { id: i, v }] as [never, never, never],
          ),
        ),
      );
    const c = compareCase(
      s,
      repeats(s, 'base', [{ diff: many(1) }]),
      repeats(s, 'head', [{ diff: many(2), verdicts: { ok: 'fail' } }]),
    );
    expect(c.state_diff).toHaveLength(20);
    expect(c.state_diff_cut).toBe(5);
    expect(c.state_diff[0]).toEqual({ table: 'items', key: '0', column: 'v', base: 1, head: 2 });
  });
});

describe('stateDifferences with ignore_columns', () => {
  const at = (t: string) => `2026-12-01T20:53:14.${t}Z`;
  const base = stateDiff(
    tableDiff('audit_log', ['id'], [[{ id: 1 }, undefined, { id: 1, what: 'refund', at: at('73978') }]]),
    tableDiff('events', null, [[null, undefined, { what: 'refund', at: at('73978') }]]),
    tableDiff(
      'orders',
      ['id'],
      [[{ id: 'ORD-1' }, order({ id: 'ORD-1' }), order({ id: 'ORD-1', total: 80 })]],
    ),
  );
  const head = stateDiff(
    tableDiff('audit_log', ['id'], [[{ id: 1 }, undefined, { id: 1, what: 'refund', at: at('76701') }]]),
    tableDiff('events', null, [[null, undefined, { what: 'refund', at: at('76701') }]]),
    tableDiff(
      'orders',
      ['id'],
      [[{ id: 'ORD-1' }, order({ id: 'ORD-1' }), order({ id: 'ORD-1', total: 90 })]],
    ),
  );

  it('leaves ignored columns out, keyed and keyless, and names those that differed', () => {
    expect(stateDifferences(base, head).differences.map((d) => `${d.table}.${d.column}`)).toEqual([
      'audit_log.at',
      'events.(row)',
      'events.(row)',
      'orders.total',
    ]);
    const r = stateDifferences(base, head, undefined, 20, {
      audit_log: ['at'],
      events: ['at'],
      orders: ['updated_at'],
    });
    expect(r.differences).toEqual([{ table: 'orders', key: 'ORD-1', column: 'total', base: 80, head: 90 }]);
    // orders.updated_at is ignored but did not differ: not named.
    expect(r.ignored).toEqual(['audit_log.at', 'events.at']);
  });

  it('still shows what differs besides the ignored column, the row without it', () => {
    const other = structuredClone(head);
    other.tables.events.inserted[0].after!.what = 'refund twice';
    const r = stateDifferences(base, other, undefined, 20, { events: ['at'], orders: ['id', 'total'] });
    expect(r.differences.map((d) => `${d.table}.${d.column}`)).toEqual([
      'audit_log.at',
      'events.(row)',
      'events.(row)',
    ]);
    expect(r.differences.slice(1).map((d) => [d.base, d.head])).toEqual([
      ['(absent)', { what: 'refund twice' }],
      [{ what: 'refund' }, '(absent)'],
    ]);
    expect(r.ignored).toEqual(['events.at', 'orders.total']);
  });

  it("a case merges the suite's list with the scenario's and reports what it ignored", () => {
    const s = { ...scenario('s', [{ id: 'e', critical: true }]), ignore_columns: { events: ['at'] } };
    const c = compareCase(
      s,
      repeats(s, 'base', [{ diff: base }]),
      repeats(s, 'head', [{ diff: head, verdicts: { e: 'fail' } }]),
      { ignoreColumns: { audit_log: ['at'] } },
    );
    expect(c.class).not.toBe('unchanged');
    expect(c.state_diff.map((d) => `${d.table}.${d.column}`)).toEqual(['orders.total']);
    expect(c.ignored_columns).toEqual(['audit_log.at', 'events.at']);
  });
});
