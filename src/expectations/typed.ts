// How a query expectation compares and shows values. Strict (the default) follows the column's type:
// numbers by value across numeric types, instants only in timestamp and date columns, JSON by JSON's
// own types (a string is not a number, a boolean not a string), and every other column as text, so
// a value that only looks like the expected one (text '1e2' for 100, 't' for true, '"9"' for 9) fails.
// `loose: true` keeps the older reading by form (values.ts sameValue), where those pass. Both show
// the two sides of a mismatch in one form: the literal of the column's type.

import { canonicalJson } from '../model/canonical-json.js';
import type { Row } from '../model/episode.js';
import { compareDecimals, compareInstants, parseBoolean, parseDecimal, parseInstant } from './scalars.js';
import { GradeError, orderValues, sameValue } from './values.js';

/** Column name → type name (pg_type.typname; `_int4` is an array of int4). */
export type ColumnTypes = Record<string, string>;

/** Compares and shows the values of one column (`column` undefined: a value of unknown type). */
export interface Comparison {
  readonly loose: boolean;
  same(actual: unknown, expected: unknown, column?: string): boolean;
  /** Orders actual against expected: negative, zero, positive; null when either is null. */
  order(actual: unknown, expected: unknown, column: string | undefined, comparator: string): number | null;
  /** The value as a literal of its column's type: numbers bare, text and instants quoted, JSON compact. */
  show(value: unknown, column?: string): string;
}

type Kind = 'number' | 'boolean' | 'instant' | 'json' | 'text' | 'array' | 'unknown';

const NUMERIC = new Set(['int2', 'int4', 'int8', 'numeric', 'float4', 'float8', 'oid']);
const INSTANT = new Set(['timestamp', 'timestamptz', 'date']);

function kindOf(type: string | undefined): Kind {
  if (type === undefined || type.startsWith('oid:')) return 'unknown';
  if (type.startsWith('_')) return 'array';
  if (NUMERIC.has(type)) return 'number';
  if (type === 'bool') return 'boolean';
  if (INSTANT.has(type)) return 'instant';
  if (type === 'json' || type === 'jsonb') return 'json';
  return 'text';
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** The text a value stands for in a text column: strings as they are, numbers as written, JSON compact. */
function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object' && v !== null) return canonicalJson(v);
  return String(v);
}

/** Deep equality with JSON's types: numbers by value, strings exactly, no string is a number or a boolean. */
function sameJson(a: unknown, e: unknown): boolean {
  if (a === null || e === null || a === undefined || e === undefined) return (a ?? null) === (e ?? null);
  if (Array.isArray(a) || Array.isArray(e)) {
    return (
      Array.isArray(a) && Array.isArray(e) && a.length === e.length && a.every((v, i) => sameJson(v, e[i]))
    );
  }
  if (isPlainObject(a) && isPlainObject(e)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(e).length && keys.every((k) => Object.hasOwn(e, k) && sameJson(a[k], e[k]))
    );
  }
  if (typeof a === 'number' && typeof e === 'number') {
    // The driver reads a JSON number as a double: past 2^53 two different integers read alike.
    if (!exactDouble(a) || !exactDouble(e)) throw new GradeError(INEXACT_JSON_NUMBER);
  }
  return typeof a === typeof e && a === e;
}

const INEXACT_JSON_NUMBER =
  "a number inside JSON past 2^53 (or with more digits than a double holds) cannot be compared exactly: select it as numeric, e.g. (doc->>'n')::numeric, and compare that";

/** Whether a double read from JSON stands for one decimal only: not an integer beyond 2^53. */
function exactDouble(n: number): boolean {
  return !Number.isInteger(n) || Number.isSafeInteger(n);
}

/**
 * An expected document written as JSON text (`equals: '{"a": 1}'`), read as JSON when the column
 * holds an object or array; a scalar string stays a string, so `"9"` never reads as 9.
 */
function expectedJson(actual: unknown, expected: unknown): unknown {
  const structure = Array.isArray(actual) || isPlainObject(actual);
  if (typeof expected !== 'string' || !structure || !/^\s*[[{]/.test(expected)) return expected;
  let parsed: unknown;
  try {
    parsed = JSON.parse(expected);
  } catch {
    return expected;
  }
  // JSON.parse rounds a number the author wrote exactly (0.30000000000000001 to 0.3): refuse it.
  for (const m of expected.matchAll(JSON_NUMBER_OUTSIDE_STRINGS)) {
    if (m[1] === undefined) continue;
    const written = parseDecimal(m[1]);
    const read = parseDecimal(Number(m[1]));
    if (!written || !read || compareDecimals(written, read) !== 0) throw new GradeError(INEXACT_JSON_NUMBER);
  }
  return parsed;
}

// A JSON string (skipped) or a number (group 1).
const JSON_NUMBER_OUTSIDE_STRINGS = /"(?:[^"\\]|\\.)*"|(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

function sameTyped(actual: unknown, expected: unknown, type: string | undefined): boolean {
  const a = actual ?? null;
  const e = expected ?? null;
  if (a === null || e === null) return a === e;
  switch (kindOf(type)) {
    case 'unknown':
      return sameValue(a, e);
    case 'number': {
      const x = parseDecimal(a);
      const y = parseDecimal(e);
      if (x || y) return x !== null && y !== null && compareDecimals(x, y) === 0;
      return textOf(a) === textOf(e); // NaN, Infinity
    }
    case 'boolean': {
      const x = parseBoolean(a);
      return x !== null && x === parseBoolean(e);
    }
    case 'instant': {
      const x = parseInstant(a);
      const y = parseInstant(e);
      if (x || y) return x !== null && y !== null && compareInstants(x, y) === 0;
      return textOf(a) === textOf(e); // infinity
    }
    case 'json':
      return sameJson(a, expectedJson(a, e));
    case 'array': {
      if (!Array.isArray(a)) return textOf(a) === textOf(e);
      const element = type!.slice(1);
      return Array.isArray(e) && a.length === e.length && a.every((v, i) => sameTyped(v, e[i], element));
    }
    case 'text':
      return textOf(a) === textOf(e);
  }
}

function orderTyped(
  actual: unknown,
  expected: unknown,
  type: string | undefined,
  comparator: string,
): number | null {
  if (actual === null || actual === undefined || expected === null || expected === undefined) return null;
  const kind = kindOf(type);
  if (kind === 'unknown') return orderValues(actual, expected, comparator);
  if (kind === 'number') {
    const x = parseDecimal(actual);
    const y = parseDecimal(expected);
    if (x && y) return compareDecimals(x, y);
  } else if (kind === 'instant') {
    const x = parseInstant(actual);
    const y = parseInstant(expected);
    if (x && y) return compareInstants(x, y);
  } else {
    throw new GradeError(
      `${comparator} compares numbers or timestamps, but the column is of type ${type}: use equals, in or matches`,
    );
  }
  throw new GradeError(
    `${comparator} on a column of type ${type} needs ${kind === 'number' ? 'a number' : 'a timestamp'}, got ${showTyped(expected, type)} against ${showTyped(actual, type)}`,
  );
}

function showTyped(v: unknown, type: string | undefined): string {
  if (v === null || v === undefined) return 'null';
  switch (kindOf(type)) {
    case 'number':
      return parseDecimal(v) ? textOf(v) : JSON.stringify(textOf(v));
    case 'boolean':
      return typeof v === 'boolean' ? String(v) : JSON.stringify(textOf(v));
    case 'json':
      return canonicalJson(v);
    case 'array':
      return Array.isArray(v)
        ? `[${v.map((x) => showTyped(x, type!.slice(1))).join(',')}]`
        : JSON.stringify(textOf(v));
    case 'instant':
    case 'text':
      return JSON.stringify(textOf(v));
    case 'unknown':
      return showByForm(v);
  }
}

/** A value of unknown type as its form suggests: decimals bare (also when they arrive as strings). */
function showByForm(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return parseDecimal(v) ? v : JSON.stringify(v);
  if (v instanceof Date) return JSON.stringify(v.toISOString());
  if (Array.isArray(v)) return `[${v.map(showByForm).join(',')}]`;
  if (isPlainObject(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${showByForm(v[k])}`).join(',')}}`;
  }
  return typeof v === 'bigint' ? v.toString() : String(v);
}

/** Strict comparison by the columns' types (unknown columns by form). */
export function strictComparison(types: ColumnTypes): Comparison {
  const typeOf = (column: string | undefined) => (column === undefined ? undefined : types[column]);
  return {
    loose: false,
    same: (a, e, column) => sameTyped(a, e, typeOf(column)),
    order: (a, e, column, comparator) => orderTyped(a, e, typeOf(column), comparator),
    show: (v, column) => showTyped(v, typeOf(column)),
  };
}

/** The reading by form of `loose: true`: 150 = "150.00", true = 't', "9" = 9 inside JSON. */
export const LOOSE: Comparison = {
  loose: true,
  same: (a, e) => sameValue(a, e),
  order: (a, e, _column, comparator) => orderValues(a, e, comparator),
  show: (v) => showByForm(v),
};

/** The columns of a result as a name → type map. */
export function columnTypes(fields: { name: string; type: string }[] | undefined): ColumnTypes {
  return Object.fromEntries((fields ?? []).map((f) => [f.name, f.type]));
}

/** Whether two rows have the same columns with values that compare equal. */
export function sameRowBy(cmp: Comparison, actual: Row, expected: Row): boolean {
  const keys = Object.keys(actual);
  if (keys.length !== Object.keys(expected).length) return false;
  return keys.every((k) => Object.hasOwn(expected, k) && cmp.same(actual[k], expected[k], k));
}

/** A row with every value shown as its column's literal, keys sorted, so two rows read alike. */
export function showRow(cmp: Comparison, row: Row): string {
  const keys = Object.keys(row).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${cmp.show(row[k], k)}`).join(',')}}`;
}

/** Rows compared as a multiset: the rows left unmatched on each side. */
export function unmatchedRowsBy(
  cmp: Comparison,
  actual: Row[],
  expected: Row[],
): { missing: Row[]; unexpected: Row[] } {
  const left = [...actual];
  const missing: Row[] = [];
  for (const row of expected) {
    const i = left.findIndex((candidate) => sameRowBy(cmp, candidate, row));
    if (i === -1) missing.push(row);
    else left.splice(i, 1);
  }
  return { missing, unexpected: left };
}

const SHOWN = 120;
const BEFORE = 40;

/**
 * Two shown values for a message, each cut to the same window around the first character where
 * they differ (with `...` where text is left out), so a difference late in a long row stays visible.
 */
export function showPair(expected: string, actual: string): [string, string] {
  if (expected.length <= SHOWN && actual.length <= SHOWN) return [expected, actual];
  let at = 0;
  while (at < expected.length && at < actual.length && expected[at] === actual[at]) at++;
  const start = Math.max(0, at - BEFORE);
  const cut = (s: string) => {
    if (s.length <= SHOWN && start === 0) return s;
    const end = start + SHOWN - (start > 0 ? 3 : 0) - 3;
    return `${start > 0 ? '...' : ''}${s.slice(start, end)}${s.length > end ? '...' : ''}`;
  };
  return [cut(expected), cut(actual)];
}

/** One shown value, cut at the end when long. */
export function showOne(text: string): string {
  return text.length > SHOWN ? `${text.slice(0, SHOWN - 3)}...` : text;
}
