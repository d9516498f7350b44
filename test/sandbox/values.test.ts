// Value conversion and the change-log fold, without a server.
import { describe, expect, it } from 'vitest';
import { foldChanges, type LogRow } from '../../src/sandbox/capture.js';
import type { TableInfo } from '../../src/sandbox/catalog.js';
import { columnValue, isoTimestamp, NumberText, parseRowJson } from '../../src/sandbox/values.js';

describe('isoTimestamp', () => {
  it('turns server text and JSON forms into ISO 8601 UTC, keeping the fraction', () => {
    expect(isoTimestamp('2024-05-01 10:00:00+00')).toBe('2024-05-01T10:00:00Z');
    expect(isoTimestamp('2024-05-01 12:30:00.123456+02:30')).toBe('2024-05-01T10:00:00.123456Z');
    expect(isoTimestamp('2024-05-01T10:00:00-05:00')).toBe('2024-05-01T15:00:00Z');
    expect(isoTimestamp('2024-05-01 10:00:00.5')).toBe('2024-05-01T10:00:00.5Z');
    expect(isoTimestamp('0044-03-15 00:00:00+00')).toBe('0044-03-15T00:00:00Z');
  });

  it('keeps what has no ISO form as the server wrote it', () => {
    expect(isoTimestamp('infinity')).toBe('infinity');
    expect(isoTimestamp('0044-03-15 00:00:00+00 BC')).toBe('0044-03-15 00:00:00+00 BC');
  });
});

describe('parseRowJson and columnValue', () => {
  it('keeps every number exact until the column type says what it is', () => {
    const row = parseRowJson(
      '{"id": 9007199254740993, "n": 1.50, "f": 0.1, "j": {"a": [1, 2.5]}, "s": "x\\"y"}',
    ) as Record<string, unknown>;
    expect(row.id).toEqual(new NumberText('9007199254740993'));
    expect(columnValue(row.id, { type: 'int8' })).toBe('9007199254740993');
    expect(columnValue(row.n, { type: 'numeric' })).toBe('1.50');
    expect(columnValue(row.f, { type: 'float8' })).toBe(0.1);
    expect(columnValue(row.j, { type: 'jsonb' })).toEqual({ a: [1, 2.5] });
    expect(columnValue(row.s, { type: 'text' })).toBe('x"y');
  });

  it('converts arrays by their element type', () => {
    expect(columnValue(parseRowJson('[1, 2]'), { type: '_int8', element: 'int8' })).toEqual(['1', '2']);
    expect(columnValue(parseRowJson('[1, 2]'), { type: '_int4', element: 'int4' })).toEqual([1, 2]);
    expect(
      columnValue(['2024-05-01T10:00:00+00:00'], { type: '_timestamptz', element: 'timestamptz' }),
    ).toEqual(['2024-05-01T10:00:00Z']);
  });

  it('rejects text that is not JSON', () => {
    expect(() => parseRowJson('{"a": }')).toThrow(/invalid JSON at offset 6/);
    expect(() => parseRowJson('[1] 2')).toThrow(/invalid JSON/);
  });
});

const ITEMS: TableInfo = {
  key: 'items',
  schema: 'public',
  name: 'items',
  sql: '"public"."items"',
  primaryKey: ['id'],
  columns: [
    { name: 'id', type: { type: 'int8' } },
    { name: 'qty', type: { type: 'int4' } },
  ],
};
const TAGS: TableInfo = {
  ...ITEMS,
  key: 'tags',
  name: 'tags',
  primaryKey: null,
  columns: [{ name: 't', type: { type: 'text' } }],
};

const log = (tbl: string, op: string, old: string | null, next: string | null): LogRow => ({
  tbl,
  op,
  old,
  new: next,
});

describe('foldChanges', () => {
  it('nets a sequence of writes per primary key', () => {
    const diffs = foldChanges(
      [
        log('items', 'I', null, '{"id": 1, "qty": 1}'),
        log('items', 'U', '{"id": 1, "qty": 1}', '{"id": 1, "qty": 2}'),
        log('items', 'U', '{"id": 7, "qty": 1}', '{"id": 7, "qty": 3}'),
        log('items', 'U', '{"id": 7, "qty": 3}', '{"id": 7, "qty": 1}'),
        log('items', 'D', '{"id": 8, "qty": 1}', null),
        log('items', 'I', null, '{"id": 8, "qty": 5}'),
        log('items', 'I', null, '{"id": 9, "qty": 1}'),
        log('items', 'D', '{"id": 9, "qty": 1}', null),
      ],
      [ITEMS],
    );
    expect(diffs).toEqual([
      {
        table: 'items',
        primaryKey: ['id'],
        // The column types travel with the diff, so state comparisons go by type (as queries do).
        columnTypes: { id: 'int8', qty: 'int4' },
        inserted: [{ table: 'items', op: 'insert', key: { id: '1' }, after: { id: '1', qty: 2 } }],
        updated: [
          {
            table: 'items',
            op: 'update',
            key: { id: '8' },
            before: { id: '8', qty: 1 },
            after: { id: '8', qty: 5 },
          },
        ],
        deleted: [],
      },
    ]);
  });

  it('diffs a table without a key as a multiset', () => {
    const diffs = foldChanges(
      [
        log('tags', 'I', null, '{"t": "a"}'),
        log('tags', 'I', null, '{"t": "a"}'),
        log('tags', 'D', '{"t": "a"}', null),
        log('tags', 'U', '{"t": "b"}', '{"t": "c"}'),
        log('tags', 'U', '{"t": "c"}', '{"t": "b"}'),
      ],
      [TAGS],
    );
    expect(diffs).toEqual([
      {
        table: 'tags',
        primaryKey: null,
        columnTypes: { t: 'text' },
        inserted: [{ table: 'tags', op: 'insert', key: null, after: { t: 'a' } }],
        updated: [],
        deleted: [],
      },
    ]);
  });
});
