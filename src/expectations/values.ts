// Values compared by their form alone, not by driver representation: 150, "150" and "150.00" are
// one number; 't' and true one boolean; two offsets of one instant one timestamp; JSON deeply,
// whatever its key order. This is the reading of `loose: true`, of values whose column type is not
// known, and of call arguments and change-log values; query results compare by their column's type
// (typed.ts), where a value that merely looks like the expected one does not pass.

import { canonicalJson } from '../model/canonical-json.js';
import type { Row } from '../model/episode.js';
import { compileSuitePattern, type SuitePattern } from './pattern.js';
import { compareDecimals, compareInstants, parseBoolean, parseDecimal, parseInstant } from './scalars.js';

/** An expectation that cannot be evaluated as written (a bad regex, an unordered `gt`): an error, not a fail. */
export class GradeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GradeError';
  }
}

/** The comparators of a `query` expectation (docs/formats/scenario.md). */
export type Comparator =
  | 'equals'
  | 'not_equals'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'
  | 'in'
  | 'matches'
  | 'rows'
  | 'empty';

/** The comparators that need one value: one row of one column. */
export const SCALAR_COMPARATORS = [
  'equals',
  'not_equals',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'matches',
] as const;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** Parses a JSON text into an object or array (a json column read as text); null when it is not one. */
function parseJsonStructure(v: unknown): unknown[] | Record<string, unknown> | null {
  if (Array.isArray(v) || isPlainObject(v)) return v;
  if (typeof v !== 'string' || !/^\s*[[{]/.test(v)) return null;
  try {
    const parsed: unknown = JSON.parse(v);
    return Array.isArray(parsed) || isPlainObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** Whether two values mean the same: numbers, booleans, nulls, instants and JSON by meaning, strings exactly. */
export function sameValue(a: unknown, b: unknown): boolean {
  const x = a === undefined ? null : a;
  const y = b === undefined ? null : b;
  if (x === null || y === null) return x === y;
  if (typeof x === 'boolean' || typeof y === 'boolean') {
    const p = parseBoolean(x);
    return p !== null && p === parseBoolean(y);
  }
  const dx = parseDecimal(x);
  const dy = parseDecimal(y);
  if (dx || dy) return dx !== null && dy !== null && compareDecimals(dx, dy) === 0;
  const ix = parseInstant(x);
  const iy = parseInstant(y);
  if (ix && iy) return compareInstants(ix, iy) === 0;
  if (x === y) return true;
  const jx = parseJsonStructure(x);
  const jy = parseJsonStructure(y);
  if (!jx || !jy) return false;
  if (Array.isArray(jx) || Array.isArray(jy)) {
    return (
      Array.isArray(jx) &&
      Array.isArray(jy) &&
      jx.length === jy.length &&
      jx.every((v, i) => sameValue(v, jy[i]))
    );
  }
  return sameRow(jx, jy);
}

/** Whether two rows (or JSON objects) have the same keys with values of the same meaning. */
export function sameRow(a: Row, b: Row): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    if (!(k in a) || !(k in b) || !sameValue(a[k], b[k])) return false;
  }
  return true;
}

/**
 * Orders two values by meaning: numerically when both are numbers, as instants when both are
 * timestamps. Null when either is null (like SQL, null is neither above nor below anything).
 */
export function orderValues(a: unknown, b: unknown, comparator = 'an ordering'): number | null {
  if (a === null || a === undefined || b === null || b === undefined) return null;
  const da = parseDecimal(a);
  const db = parseDecimal(b);
  if (da && db) return compareDecimals(da, db);
  const ia = parseInstant(a);
  const ib = parseInstant(b);
  if (ia && ib) return compareInstants(ia, ib);
  throw new GradeError(
    `${comparator} compares numbers or timestamps, but got ${formatValue(a)} and ${formatValue(b)}`,
  );
}

/** The string a regex is matched against: strings as they are, numbers as written, JSON compact. */
export function stringForm(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object' && v !== null) return canonicalJson(v);
  return String(v);
}

/**
 * Compiles a pattern from an expectation with RE2 semantics (linear time, config/pattern.ts); a bad
 * pattern is the expectation's error, named as such.
 */
export function compilePattern(pattern: unknown, what: string): SuitePattern {
  if (typeof pattern !== 'string') {
    throw new GradeError(`${what} needs a regular expression string, got ${formatValue(pattern)}`);
  }
  const compiled = compileSuitePattern(pattern);
  if ('error' in compiled) {
    throw new GradeError(
      `${what}: invalid regular expression ${JSON.stringify(pattern)}: ${compiled.error.replace(/^not a valid regular expression: /, '')}`,
    );
  }
  return compiled.pattern;
}

/** Rows compared as a multiset by meaning: returns the rows left unmatched on each side. */
export function unmatchedRows(actual: Row[], expected: Row[]): { missing: Row[]; unexpected: Row[] } {
  const left = [...actual];
  const missing: Row[] = [];
  for (const row of expected) {
    const i = left.findIndex((candidate) => sameRow(candidate, row));
    if (i === -1) missing.push(row);
    else left.splice(i, 1);
  }
  return { missing, unexpected: left };
}

function asRows(v: unknown, comparator: string): Row[] {
  if (!Array.isArray(v) || !v.every(isPlainObject)) {
    throw new GradeError(`${comparator} compares a list of rows, got ${formatValue(v)}`);
  }
  return v as Row[];
}

/**
 * Whether `actual` satisfies `comparator expected`, by meaning. Scalar comparators take one value;
 * `rows` takes the result's rows (compared as a multiset) and `empty` takes the rows and a boolean.
 * Throws GradeError when the comparison cannot be made as written.
 */
export function compareValues(actual: unknown, comparator: Comparator, expected: unknown): boolean {
  switch (comparator) {
    case 'equals':
      return sameValue(actual, expected);
    case 'not_equals':
      return !sameValue(actual, expected);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const order = orderValues(actual, expected, comparator);
      if (order === null) return false;
      if (comparator === 'gt') return order > 0;
      if (comparator === 'gte') return order >= 0;
      if (comparator === 'lt') return order < 0;
      return order <= 0;
    }
    case 'in':
      if (!Array.isArray(expected)) {
        throw new GradeError(`in needs a list of values, got ${formatValue(expected)}`);
      }
      return expected.some((option) => sameValue(actual, option));
    case 'matches': {
      // The pattern is compiled first so a typo is reported even when the value is null.
      const pattern = compilePattern(expected, 'matches');
      // Like SQL, null matches no pattern.
      return actual !== null && actual !== undefined && pattern.test(stringForm(actual));
    }
    case 'rows': {
      const { missing, unexpected } = unmatchedRows(asRows(actual, 'rows'), asRows(expected, 'rows'));
      return missing.length === 0 && unexpected.length === 0;
    }
    case 'empty':
      if (typeof expected !== 'boolean') {
        throw new GradeError(`empty needs true or false, got ${formatValue(expected)}`);
      }
      return (asRows(actual, 'empty').length === 0) === expected;
  }
}

/** A value as a message shows it: numbers as written, strings quoted, JSON compact, long values cut. */
export function formatValue(v: unknown): string {
  let text: string;
  if (v === undefined || v === null) text = 'null';
  else if (typeof v === 'string') text = parseDecimal(v) ? v : JSON.stringify(v);
  else if (v instanceof Date) text = v.toISOString();
  else if (typeof v === 'object') text = canonicalJson(v);
  else text = String(v);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
