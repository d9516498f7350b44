import { describe, expect, it } from 'vitest';
import { gradeChanges } from '../../src/expectations/kinds/changes.js';
import { gradeForbidChanges } from '../../src/expectations/kinds/forbid-changes.js';
import { gradeOnlyChanges } from '../../src/expectations/kinds/only-changes.js';
import { calls, deleted, diffOf, inserted, updated } from './records.js';

const order = (refundCount: number) => ({
  id: 'ORD-1001',
  refund_count: refundCount,
  refunded_amount: `${refundCount * 40}.00`,
});
const refund = (id: number, orderId = 'ORD-1001') => ({ id, order_id: orderId, amount: '40.00' });

describe('changes', () => {
  const once = diffOf(updated('orders', order(0), order(1)), inserted('refunds', refund(1)));
  const twice = diffOf(
    updated('orders', order(0), order(2)),
    inserted('refunds', refund(1)),
    inserted('refunds', refund(2)),
  );

  it('passes when the given counts match', () => {
    const g = gradeChanges({ table: 'refunds', inserted: 1, deleted: 0 }, once);
    expect(g).toMatchObject({
      verdict: 'pass',
      expected: { inserted: 1, deleted: 0 },
      actual: { inserted: 1, deleted: 0 },
    });
    expect(g.message).toBe('refunds: 1 inserted, 0 deleted, as expected');
  });

  it('checks only the counts given', () => {
    expect(
      gradeChanges(
        { table: 'orders', updated: 1 },
        diffOf(updated('orders', order(0), order(1)), deleted('orders', order(5))),
      ).verdict,
    ).toBe('pass');
  });

  it('labels a count above the expected one as an extra effect, naming the rows', () => {
    const g = gradeChanges({ table: 'refunds', inserted: 1 }, twice);
    expect(g).toMatchObject({ verdict: 'fail', label: 'EXTRA_EFFECT', actual: { inserted: 2 } });
    expect(g.message).toBe('refunds: expected 1 inserted row, got 2 (1, 2)');
  });

  it('labels a count below the expected one as a missing effect', () => {
    const g = gradeChanges({ table: 'refunds', inserted: 1 }, diffOf(updated('orders', order(0), order(1))));
    expect(g).toMatchObject({ verdict: 'fail', label: 'MISSING_EFFECT' });
    expect(g.message).toBe('refunds: expected 1 inserted row, got 0');
  });

  it('counts an unchanged table as zero changes', () => {
    expect(gradeChanges({ table: 'emails', inserted: 0, updated: 0, deleted: 0 }, once).verdict).toBe('pass');
  });

  it('filters by where on the values before or after the change, by meaning', () => {
    const two = diffOf(
      inserted('refunds', refund(1, 'ORD-1001')),
      inserted('refunds', refund(2, 'ORD-2002')),
    );
    expect(
      gradeChanges({ table: 'refunds', inserted: 1, where: { order_id: 'ORD-1001', amount: 40 } }, two)
        .verdict,
    ).toBe('pass');
    const after = gradeChanges({ table: 'orders', updated: 1, where: { refund_count: 1 } }, twice);
    expect(after.message).toBe('orders where refund_count = 1: expected 1 updated row, got 0');
    // The before-values match too: the row had refund_count 0 before it was updated.
    expect(gradeChanges({ table: 'orders', updated: 1, where: { refund_count: '0' } }, twice).verdict).toBe(
      'pass',
    );
  });

  it('counts a table without a primary key as a multiset of rows', () => {
    const log = diffOf(
      inserted('audit_log', { action: 'refund', actor: 'agent' }, false),
      inserted('audit_log', { action: 'refund', actor: 'agent' }, false),
    );
    const g = gradeChanges({ table: 'audit_log', inserted: 1 }, log);
    expect(g.label).toBe('EXTRA_EFFECT');
    expect(g.message).toBe(
      'audit_log: expected 1 inserted row, got 2 ({"action":"refund","actor":"agent"}, {"action":"refund","actor":"agent"})',
    );
  });

  it('joins several mismatches in one sentence, labelled by the first', () => {
    const g = gradeChanges(
      { table: 'refunds', inserted: 3, deleted: 0 },
      diffOf(inserted('refunds', refund(1)), deleted('refunds', refund(9))),
    );
    expect(g.label).toBe('MISSING_EFFECT');
    expect(g.message).toBe(
      'refunds: expected 3 inserted rows, got 1 (1); expected 0 deleted rows, got 1 (9)',
    );
  });
});

describe('only_changes', () => {
  it('passes when only the listed tables changed', () => {
    const d = diffOf(updated('orders', order(0), order(1)), inserted('refunds', refund(1)));
    expect(gradeOnlyChanges(['orders', 'refunds', 'emails'], d).verdict).toBe('pass');
  });

  it('fails naming every other table that changed and its counts', () => {
    const d = diffOf(
      updated('orders', order(0), order(1)),
      updated('customers', { id: 'CUS-1', tier: 'gold' }, { id: 'CUS-1', tier: 'silver' }),
      inserted('audit_log', { action: 'x' }, false),
      inserted('audit_log', { action: 'y' }, false),
    );
    const g = gradeOnlyChanges(['orders'], d);
    expect(g).toMatchObject({ verdict: 'fail', label: 'EXTRA_EFFECT', actual: ['audit_log', 'customers'] });
    expect(g.message).toBe(
      'only orders may change, but audit_log (2 inserted) and customers (1 updated) changed',
    );
  });

  it('with an empty list, nothing may change', () => {
    expect(gradeOnlyChanges([], diffOf()).verdict).toBe('pass');
    expect(gradeOnlyChanges([], diffOf(deleted('orders', order(0)))).message).toBe(
      'nothing may change, but orders (1 deleted) changed',
    );
  });
});

describe('forbid_changes', () => {
  it('passes when no forbidden operation happened', () => {
    const d = diffOf(inserted('refunds', refund(1)));
    expect(gradeForbidChanges({ table: 'refunds', ops: ['delete', 'update'] }, d, []).verdict).toBe('pass');
    expect(
      gradeForbidChanges({ table: 'customers', ops: ['insert', 'update', 'delete'] }, d, []).verdict,
    ).toBe('pass');
  });

  it('fails on a forbidden operation in the diff', () => {
    const d = diffOf(deleted('refunds', refund(1)), deleted('refunds', refund(2)));
    const g = gradeForbidChanges({ table: 'refunds', ops: ['delete'] }, d, []);
    expect(g).toMatchObject({ verdict: 'fail', label: 'EXTRA_EFFECT' });
    expect(g.message).toBe('refunds: expected no delete, got 2 deleted rows (1, 2)');
  });

  it('catches an operation a later call undid, from the calls own changes', () => {
    const made = calls(
      {
        tool: 'update_customer',
        changes: [updated('customers', { id: 'C', tier: 'gold' }, { id: 'C', tier: 'vip' })],
      },
      {
        tool: 'update_customer',
        changes: [updated('customers', { id: 'C', tier: 'vip' }, { id: 'C', tier: 'gold' })],
      },
    );
    const g = gradeForbidChanges({ table: 'customers', ops: ['update'] }, diffOf(), made);
    expect(g.verdict).toBe('fail');
    expect(g.message).toBe(
      'customers: expected no update, got updated rows by update_customer #1, update_customer #2, undone before the end',
    );
  });
});
