import { describe, expect, it } from 'vitest';
import { bindNamedParams, splitStatements } from '../../src/sql/named-params.js';

describe('bindNamedParams', () => {
  it('binds names in order of first use and reuses numbers', () => {
    const b = bindNamedParams('UPDATE orders SET a = a + :amount WHERE id = :order_id AND :amount > 0', {
      amount: 40,
      order_id: 'ORD-1',
    });
    expect(b.text).toBe('UPDATE orders SET a = a + $1 WHERE id = $2 AND $1 > 0');
    expect(b.names).toEqual(['amount', 'order_id']);
    expect(b.values).toEqual([40, 'ORD-1']);
  });

  it('leaves casts, strings, identifiers, comments and dollar quotes alone', () => {
    const sql = `SELECT :a::int, ':b', "c:d", $$ :e $$, $t$ :f $t$ -- :g
    /* :h */ FROM t WHERE x = :i`;
    const b = bindNamedParams(sql, { a: 1, i: 2 });
    expect(b.names).toEqual(['a', 'i']);
    expect(b.text).toContain('$1::int, \':b\', "c:d", $$ :e $$, $t$ :f $t$ -- :g');
    expect(b.text).toContain('/* :h */ FROM t WHERE x = $2');
  });

  it('binds a missing argument as null, never as text', () => {
    expect(bindNamedParams('SELECT :x', {}).values).toEqual([null]);
    const hostile = '1; DROP TABLE orders; --';
    const b = bindNamedParams('SELECT * FROM t WHERE id = :id', { id: hostile });
    expect(b.text).not.toContain('DROP');
    expect(b.values).toEqual([hostile]);
  });
});

describe('splitStatements', () => {
  it('splits on semicolons outside quotes and comments', () => {
    expect(
      splitStatements("UPDATE t SET a = ';'; INSERT INTO u VALUES ($$;$$) RETURNING id;\n-- done;\n"),
    ).toEqual(["UPDATE t SET a = ';'", 'INSERT INTO u VALUES ($$;$$) RETURNING id']);
  });
  it('returns one statement without a trailing semicolon', () => {
    expect(splitStatements('SELECT 1')).toEqual(['SELECT 1']);
  });
});
