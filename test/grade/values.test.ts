import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareValues, formatValue, GradeError, sameValue } from '../../src/expectations/values.js';
import { canonicalJson } from '../../src/model/canonical-json.js';

describe('sameValue: numbers by meaning', () => {
  it('treats 150, "150", "150.00", 150n and "1.5e2" as one number', () => {
    for (const form of ['150', '150.00', 150n, '1.5e2', 150.0]) expect(sameValue(150, form)).toBe(true);
    expect(sameValue('150', '150.00')).toBe(true);
    expect(sameValue(150, '150.01')).toBe(false);
    expect(sameValue('-0', 0)).toBe(true);
  });

  it('keeps bigint precision beyond 2^53', () => {
    expect(sameValue('9223372036854775807', 9223372036854775807n)).toBe(true);
    expect(sameValue('9223372036854775807', '9223372036854775806')).toBe(false);
  });

  it('leaves strings that are not canonical numbers alone', () => {
    expect(sameValue('007', 7)).toBe(false);
    expect(sameValue('ORD-1001', 1001)).toBe(false);
    expect(sameValue('007', '007')).toBe(true);
  });

  it('holds for any integer written with trailing decimal zeros', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
        fc.integer({ min: 1, max: 6 }),
        (n, zeros) => {
          expect(sameValue(n, `${n}.${'0'.repeat(zeros)}`)).toBe(true);
          expect(sameValue(n + 1n, `${n}.${'0'.repeat(zeros)}`)).toBe(false);
        },
      ),
    );
  });
});

describe('sameValue: booleans, nulls, timestamps, JSON', () => {
  it('reads the driver text forms of booleans', () => {
    expect(sameValue(true, 't')).toBe(true);
    expect(sameValue('true', true)).toBe(true);
    expect(sameValue(false, 'f')).toBe(true);
    expect(sameValue(true, 'f')).toBe(false);
    // 1 is a number, not a boolean.
    expect(sameValue(true, 1)).toBe(false);
  });

  it('equates null and undefined only with each other', () => {
    expect(sameValue(null, undefined)).toBe(true);
    expect(sameValue(null, 0)).toBe(false);
    expect(sameValue('', null)).toBe(false);
    expect(sameValue(false, null)).toBe(false);
  });

  it('compares timestamps as instants across offsets and forms', () => {
    expect(sameValue('2024-05-01T10:00:00+02:00', '2024-05-01T08:00:00.000Z')).toBe(true);
    expect(sameValue('2024-05-01 08:00:00+00', '2024-05-01T08:00:00Z')).toBe(true);
    expect(sameValue(new Date('2024-05-01T08:00:00Z'), '2024-05-01T03:00:00-05')).toBe(true);
    expect(sameValue('2024-05-01T08:00:00.000001Z', '2024-05-01T08:00:00Z')).toBe(false);
    expect(sameValue('2024-05-01T08:00:00Z', '2024-05-01T08:00:01Z')).toBe(false);
  });

  it('reads a timestamp without an offset as UTC', () => {
    expect(sameValue('2024-05-01T08:00:00', '2024-05-01T10:00:00+02:00')).toBe(true);
  });

  it('does not read an impossible date as an instant', () => {
    expect(sameValue('2024-02-30T00:00:00Z', '2024-03-01T00:00:00Z')).toBe(false);
  });

  it('holds for any instant written with any whole-hour offset', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        fc.integer({ min: -12, max: 14 }),
        (ms, hours) => {
          const utc = new Date(ms);
          const local = new Date(ms + hours * 3_600_000).toISOString().slice(0, 23);
          const offset = `${hours < 0 ? '-' : '+'}${String(Math.abs(hours)).padStart(2, '0')}:00`;
          expect(sameValue(utc.toISOString(), `${local}${offset}`)).toBe(true);
        },
      ),
    );
  });

  it('compares JSON deeply, whatever the key order, arrays in order', () => {
    expect(sameValue({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toBe(true);
    expect(sameValue({ a: 1 }, '{"a": 1}')).toBe(true);
    expect(sameValue('{"a":1,"b":2}', '{"b":2,"a":1}')).toBe(true);
    expect(sameValue([1, 2], [2, 1])).toBe(false);
    expect(sameValue({ a: 1 }, { a: 1, b: null })).toBe(false);
    expect(sameValue({ amount: '40.00' }, { amount: 40 })).toBe(true);
  });

  it('is symmetric for any JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(sameValue(a, b)).toBe(sameValue(b, a));
        expect(sameValue(a, JSON.parse(JSON.stringify(a)))).toBe(true);
      }),
    );
  });
});

describe('compareValues', () => {
  it('orders numbers by meaning, exactly', () => {
    expect(compareValues('150.00', 'gt', 149.99)).toBe(true);
    expect(compareValues('150.00', 'gte', 150)).toBe(true);
    expect(compareValues('150.00', 'gt', 150)).toBe(false);
    expect(compareValues(-2, 'lt', '-1.5')).toBe(true);
    expect(compareValues('0.1', 'lte', '0.10')).toBe(true);
    expect(compareValues('9007199254740993', 'gt', '9007199254740992')).toBe(true);
  });

  it('agrees with number order on safe numbers', () => {
    fc.assert(
      fc.property(
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        (a, b) => {
          expect(compareValues(a, 'lt', b)).toBe(a < b);
          expect(compareValues(String(a), 'gte', b)).toBe(a >= b);
        },
      ),
    );
  });

  it('orders timestamps as instants', () => {
    expect(compareValues('2024-05-01T10:00:00+02:00', 'lt', '2024-05-01T08:30:00Z')).toBe(true);
    expect(compareValues('2024-05-01T10:00:00+02:00', 'gte', '2024-05-01T08:00:00Z')).toBe(true);
  });

  it('never orders null (like SQL), and refuses to order text', () => {
    expect(compareValues(null, 'gt', 0)).toBe(false);
    expect(compareValues(null, 'lte', 0)).toBe(false);
    expect(() => compareValues('pending', 'gt', 1)).toThrow(GradeError);
    expect(() => compareValues('pending', 'gt', 1)).toThrow(
      'gt compares numbers or timestamps, but got "pending" and 1',
    );
  });

  it('checks in by meaning and not_equals as its negation', () => {
    expect(compareValues('40.00', 'in', [10, 40])).toBe(true);
    expect(compareValues('shipped', 'in', ['pending', 'refunded'])).toBe(false);
    expect(() => compareValues(1, 'in', 1)).toThrow('in needs a list of values, got 1');
    expect(compareValues('150.00', 'not_equals', 150)).toBe(false);
    expect(compareValues(null, 'not_equals', 150)).toBe(true);
  });

  it('matches a regex on the string form; null matches nothing', () => {
    expect(compareValues(150, 'matches', '^15\\d$')).toBe(true);
    expect(compareValues({ b: 1, a: 2 }, 'matches', '^\\{"a":2')).toBe(true);
    expect(compareValues('RF-0042', 'matches', '^RF-\\d{4}$')).toBe(true);
    expect(compareValues(null, 'matches', '.*')).toBe(false);
    expect(() => compareValues('x', 'matches', '([')).toThrow(/matches: invalid regular expression/);
  });

  it('compares rows as a multiset and checks empty', () => {
    const got = [
      { id: 'A', n: '1' },
      { id: 'B', n: '2' },
    ];
    expect(
      compareValues(got, 'rows', [
        { id: 'B', n: 2 },
        { id: 'A', n: 1 },
      ]),
    ).toBe(true);
    expect(compareValues(got, 'rows', [{ id: 'A', n: 1 }])).toBe(false);
    expect(compareValues(got, 'rows', [{ id: 'A' }, { id: 'B' }])).toBe(false);
    expect(compareValues([], 'empty', true)).toBe(true);
    expect(compareValues(got, 'empty', false)).toBe(true);
    expect(() => compareValues(got, 'empty', 'yes')).toThrow('empty needs true or false, got "yes"');
  });
});

describe('formatValue and canonicalJson', () => {
  it('shows numbers as written and strings quoted', () => {
    expect(formatValue('150.00')).toBe('150.00');
    expect(formatValue('ORD-1')).toBe('"ORD-1"');
    expect(formatValue(null)).toBe('null');
    expect(formatValue({ b: 1, a: [1] })).toBe('{"a":[1],"b":1}');
    expect(formatValue('x'.repeat(300))).toHaveLength(120);
  });

  it('gives one text per structure', () => {
    expect(canonicalJson({ b: { d: 1, c: 2 }, a: 1 })).toBe(canonicalJson({ a: 1, b: { c: 2, d: 1 } }));
  });

  it('writes what JSON would for dates, big integers and missing values, keys sorted at every depth', () => {
    // The one canonical form every comparison and hash uses: a database timestamp, a bigint column
    // and tool arguments all take the same path.
    const when = new Date('2026-01-02T03:04:05.000Z');
    expect(canonicalJson({ z: when, a: 12345678901234567890n, m: undefined, k: [{ y: 1, x: when }] })).toBe(
      '{"a":"12345678901234567890","k":[{"x":"2026-01-02T03:04:05.000Z","y":1}],"z":"2026-01-02T03:04:05.000Z"}',
    );
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson(JSON.parse('{"__proto__":{"b":1,"a":2}}'))).toBe('{"__proto__":{"a":2,"b":1}}');
  });
});
