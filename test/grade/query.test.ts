import { describe, expect, it } from 'vitest';
import { gradeQueryCheck, hasTopLevelOrderBy, querySubject } from '../../src/expectations/query-check.js';
import { rows } from './records.js';

const REFUND_COUNT = "SELECT refund_count FROM orders WHERE id = 'ORD-1001'";

describe('query: one row, one column compares as a scalar', () => {
  it('passes when the value means the same', () => {
    const g = gradeQueryCheck({ equals: 1 }, rows(REFUND_COUNT, [{ refund_count: '1' }]), 'e1');
    expect(g.verdict).toBe('pass');
    expect(g.message).toBe('orders[ORD-1001].refund_count is 1 (expected 1)');
  });

  it('fails with the expected and the actual value', () => {
    const g = gradeQueryCheck({ equals: 1 }, rows(REFUND_COUNT, [{ refund_count: 2 }]), 'e1');
    expect(g).toMatchObject({ verdict: 'fail', label: 'STATE_MISMATCH', expected: 1, actual: 2 });
    expect(g.message).toBe('orders[ORD-1001].refund_count: expected 1, got 2');
  });

  it('phrases each comparator in the message', () => {
    const sql = 'SELECT refunded_amount FROM orders WHERE id = 7';
    const one = (check: object) =>
      gradeQueryCheck(check, rows(sql, [{ refunded_amount: '40.00' }]), 'e1').message;
    expect(one({ gt: 40 })).toBe('orders[7].refunded_amount: expected more than 40, got 40.00');
    expect(one({ lt: 10 })).toBe('orders[7].refunded_amount: expected less than 10, got 40.00');
    expect(one({ in: [10, 20] })).toBe('orders[7].refunded_amount: expected one of [10,20], got 40.00');
    expect(one({ not_equals: 40 })).toBe('orders[7].refunded_amount: expected anything but 40, got 40.00');
    expect(one({ matches: '^5' })).toBe('orders[7].refunded_amount: expected a match for /^5/, got 40.00');
  });

  it('checks every comparator given and reports the first that fails', () => {
    const result = rows(REFUND_COUNT, [{ refund_count: 3 }]);
    expect(gradeQueryCheck({ gte: 1, lte: 3 }, result, 'e1').verdict).toBe('pass');
    const g = gradeQueryCheck({ gte: 1, lte: 2 }, result, 'e1');
    expect(g.verdict).toBe('fail');
    expect(g.message).toBe('orders[ORD-1001].refund_count: expected at most 2, got 3');
  });

  it('compares equals: null against a null value', () => {
    const sql = "SELECT refunded_at FROM orders WHERE id = 'ORD-1001'";
    expect(gradeQueryCheck({ equals: null }, rows(sql, [{ refunded_at: null }]), 'e1').verdict).toBe('pass');
    const g = gradeQueryCheck({ equals: null }, rows(sql, [{ refunded_at: '2024-05-01T10:00:00Z' }]), 'e1');
    expect(g.message).toBe('orders[ORD-1001].refunded_at: expected null, got "2024-05-01T10:00:00Z"');
  });

  it('fails when the query found no row at all', () => {
    const g = gradeQueryCheck({ equals: 1 }, rows(REFUND_COUNT, []), 'e1');
    expect(g).toMatchObject({ verdict: 'fail', label: 'STATE_MISMATCH' });
    expect(g.message).toBe('orders[ORD-1001].refund_count: expected 1, got no rows');
    expect(gradeQueryCheck({ equals: 1 }, rows('SELECT count(*) FROM t GROUP BY a', []), 'e1').message).toBe(
      'the query: expected 1, got no rows',
    );
  });

  it('is an error, saying so, when a scalar comparator meets several rows or columns', () => {
    const many = gradeQueryCheck({ equals: 1 }, rows('SELECT n FROM t', [{ n: 1 }, { n: 1 }]), 'e1');
    expect(many).toMatchObject({ verdict: 'error', label: 'EVALUATION_ERROR' });
    expect(many.message).toBe(
      'equals compares one value, but the query returned 2 rows of 1 column (n); use rows or empty for a whole result',
    );
    const wide = gradeQueryCheck({ gt: 1 }, rows('SELECT a, b FROM t', [{ a: 1, b: 2 }]), 'e1');
    expect(wide.verdict).toBe('error');
    expect(wide.message).toContain('1 row of 2 columns (a, b)');
  });
});

describe('query: errors are not failures', () => {
  it('turns a failed query into an evaluation error with its cause', () => {
    const g = gradeQueryCheck(
      { equals: 1 },
      { sql: 'SELECT nope FROM orders', error: 'column "nope" does not exist' },
      'e1',
    );
    expect(g).toEqual({
      verdict: 'error',
      label: 'EVALUATION_ERROR',
      message: 'the query failed: column "nope" does not exist',
    });
  });

  it('is an error when the query was never run, or no comparator is given', () => {
    expect(gradeQueryCheck({ equals: 1 }, undefined, 'e1').message).toBe(
      'the query of e1 was not run on the final state',
    );
    const none = gradeQueryCheck({}, rows(REFUND_COUNT, [{ refund_count: 1 }]), 'e1');
    expect(none.verdict).toBe('error');
    expect(none.message).toMatch(/^e1 gives no comparator \(one of equals, not_equals/);
  });

  it('is an error when a regex does not compile or text is ordered', () => {
    const status = rows("SELECT status FROM orders WHERE id = 'A'", [{ status: 'refunded' }]);
    expect(gradeQueryCheck({ matches: '(' }, status, 'e1')).toMatchObject({
      verdict: 'error',
      label: 'EVALUATION_ERROR',
    });
    expect(gradeQueryCheck({ gt: 3 }, status, 'e1').message).toBe(
      'gt compares numbers or timestamps, but got "refunded" and 3',
    );
  });
});

describe('query: rows and empty', () => {
  const refunds = [
    { order_id: 'ORD-1001', amount: '40.00' },
    { order_id: 'ORD-1002', amount: '15.50' },
  ];

  it('compares rows as a multiset without ORDER BY', () => {
    const result = rows('SELECT order_id, amount FROM refunds', refunds);
    const reversed = [...refunds].reverse().map((r) => ({ ...r, amount: Number(r.amount) }));
    expect(gradeQueryCheck({ rows: reversed }, result, 'e1').verdict).toBe('pass');
    const g = gradeQueryCheck({ rows: [{ order_id: 'ORD-1001', amount: 40 }] }, result, 'e1');
    expect(g.verdict).toBe('fail');
    expect(g.message).toBe('expected 1 row, got 2 rows: unexpected {"amount":15.50,"order_id":"ORD-1002"}');
  });

  it('compares rows in order with a top-level ORDER BY', () => {
    const result = rows('SELECT order_id, amount FROM refunds ORDER BY order_id', refunds);
    expect(gradeQueryCheck({ rows: refunds }, result, 'e1').verdict).toBe('pass');
    const g = gradeQueryCheck({ rows: [...refunds].reverse() }, result, 'e1');
    expect(g.verdict).toBe('fail');
    expect(g.message).toBe(
      'expected 2 rows in order, got 2 rows; row 1: expected {"amount":15.50,"order_id":"ORD-1002"}, got {"amount":40.00,"order_id":"ORD-1001"}',
    );
  });

  it('labels a row that should not exist as an extra effect and a missing one as missing', () => {
    const emails = rows("SELECT * FROM emails WHERE kind = 'refund'", [{ id: 1, kind: 'refund' }]);
    expect(gradeQueryCheck({ empty: true }, emails, 'e1')).toMatchObject({
      verdict: 'fail',
      label: 'EXTRA_EFFECT',
      message: 'expected no rows, got 1 row (first {"id":1,"kind":"refund"})',
    });
    expect(gradeQueryCheck({ empty: false }, emails, 'e1').verdict).toBe('pass');
    expect(gradeQueryCheck({ empty: false }, rows('SELECT 1 WHERE false', []), 'e1')).toMatchObject({
      verdict: 'fail',
      label: 'MISSING_EFFECT',
      message: 'expected at least one row, got none',
    });
  });
});

describe('hasTopLevelOrderBy and querySubject', () => {
  it('sees ORDER BY only at the top level, outside strings and comments', () => {
    expect(hasTopLevelOrderBy('SELECT * FROM t ORDER BY id')).toBe(true);
    expect(hasTopLevelOrderBy('select * from t order\n  by id desc;')).toBe(true);
    expect(hasTopLevelOrderBy('SELECT * FROM (SELECT * FROM t ORDER BY id) s')).toBe(false);
    expect(hasTopLevelOrderBy('SELECT row_number() OVER (ORDER BY id) FROM t')).toBe(false);
    expect(hasTopLevelOrderBy("SELECT 'order by' AS x FROM t -- order by id")).toBe(false);
    expect(hasTopLevelOrderBy('SELECT "order by" FROM t /* ORDER BY */')).toBe(false);
    expect(hasTopLevelOrderBy('SELECT $$ ORDER BY $$ FROM t')).toBe(false);
  });

  it('names a keyed select by table, key and column, else by column', () => {
    expect(querySubject("SELECT status FROM orders WHERE id = 'O''Brien'", 'status')).toBe(
      "orders[O'Brien].status",
    );
    expect(querySubject('SELECT n FROM "shop"."orders" WHERE order_no = 42;', 'n')).toBe('shop.orders[42].n');
    expect(querySubject('SELECT count(*) FROM refunds', 'count')).toBe('count');
    expect(querySubject('SELECT 1 + 1', '?column?')).toBe('the query');
  });
});
