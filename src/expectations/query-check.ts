// A read-only query on the final state against its comparators, shared by the `query` and
// `outcome_verified` kinds: the comparators' schema, what an edit of each does, and how they grade.
// The harness ran the query already (record.queries); this only reads the rows.
//
// `rows` compares the whole result as a list of objects, each with exactly the expected columns.
// The list is compared in order when the query has a top-level ORDER BY, otherwise as a multiset:
// without ORDER BY the database promises no order, and a grade must not depend on a plan (the
// rules, values by column type included, are the table in docs/formats/scenario.md).
import { z } from 'zod';
import type { QueryResult, Row } from '../model/episode.js';
import type { FieldAt, KindProblem } from './kind.js';
import { ANY_OF, AT_LEAST, AT_MOST, EXACT, LOOSENS_WHEN_ON, type Params, SQL } from './params.js';
import { compileSuitePattern } from './pattern.js';
import {
  type Comparison,
  columnTypes,
  LOOSE,
  sameRowBy,
  showOne,
  showPair,
  showRow,
  strictComparison,
  unmatchedRowsBy,
} from './typed.js';
import {
  type Comparator,
  compareValues,
  compilePattern,
  GradeError,
  type SCALAR_COMPARATORS,
} from './values.js';
import { errored, failed, type Grade, passed, plural } from './verdicts.js';

export const COMPARATORS = {
  equals: z.unknown().optional(),
  not_equals: z.unknown().optional(),
  gt: z.unknown().optional(),
  gte: z.unknown().optional(),
  lt: z.unknown().optional(),
  lte: z.unknown().optional(),
  in: z.array(z.unknown()).optional(),
  matches: z.string().optional(),
  rows: z.array(z.record(z.string(), z.unknown())).optional(),
  empty: z.boolean().optional(),
};
export const COMPARATOR_NAMES = Object.keys(COMPARATORS) as (keyof typeof COMPARATORS)[];

/** The fields of a query check: the query, its comparators, and how they read values. */
export const QUERY_CHECK_FIELDS = {
  query: z.string().min(1),
  ...COMPARATORS,
  // Not a comparator: how the comparators read values (see docs/formats/scenario.md, "How values compare").
  loose: z
    .boolean()
    .optional()
    .describe(
      "Compare values by their form, not their column's type: 150 = '150.00' in a text column, true = 't', '9' = 9 inside JSON.",
    ),
};

export const QueryCheck = z.strictObject(QUERY_CHECK_FIELDS);
export type QueryCheck = z.infer<typeof QueryCheck>;

/**
 * What an edit of each field of a query check does: every comparator must hold, so one added
 * narrows and one dropped widens; a bound moves one way; `in` allows what it lists.
 */
export const QUERY_CHECK_PARAMS = {
  query: SQL,
  equals: EXACT,
  not_equals: EXACT,
  gt: AT_LEAST,
  gte: AT_LEAST,
  lt: AT_MOST,
  lte: AT_MOST,
  in: ANY_OF,
  matches: EXACT,
  rows: EXACT,
  empty: EXACT,
  loose: LOOSENS_WHEN_ON,
} satisfies Params & Record<keyof typeof QUERY_CHECK_FIELDS, unknown>;

/** A query check that gives no comparator, or a `matches` that does not compile; `at` is where the check is. */
export function queryCheckProblems(check: QueryCheck, at: FieldAt = []): KindProblem[] {
  const given = COMPARATOR_NAMES.filter((c) => check[c] !== undefined);
  if (given.length === 0) {
    const message = `a query needs a comparator beside it: one of ${COMPARATOR_NAMES.join(', ')}`;
    return [{ at: [...at, 'query'], message }];
  }
  return check.matches === undefined ? [] : patternProblems(check.matches, [...at, 'matches']);
}

/** A regular expression of the suite that RE2 cannot compile (so it could not match in linear time). */
export function patternProblems(pattern: string, at: FieldAt): KindProblem[] {
  const compiled = compileSuitePattern(pattern);
  return 'error' in compiled ? [{ at, message: compiled.error }] : [];
}

/** The comparators of a query check, without the query. */
export type Comparators = Omit<QueryCheck, 'query'>;

const PHRASES: Record<(typeof SCALAR_COMPARATORS)[number], string> = {
  equals: '',
  not_equals: 'anything but ',
  gt: 'more than ',
  gte: 'at least ',
  lt: 'less than ',
  lte: 'at most ',
  in: 'one of ',
  matches: 'a match for ',
};

/** The comparators an expectation gives, in contract order (`equals: null` counts: it expects null). */
export function givenComparators(check: Comparators): Comparator[] {
  return COMPARATOR_NAMES.filter((name) => name in check && check[name] !== undefined);
}

/** Grades one query check on its recorded result; labels a failure STATE_MISMATCH (or by `empty`). */
export function gradeQueryCheck(check: Comparators, result: QueryResult | undefined, id: string): Grade {
  if (!result) return errored(`the query of ${id} was not run on the final state`);
  if (result.error !== undefined) return errored(`the query failed: ${result.error}`);
  const rows = result.rows ?? [];
  const comparators = givenComparators(check);
  if (comparators.length === 0) {
    return errored(`${id} gives no comparator (one of ${COMPARATOR_NAMES.join(', ')})`);
  }
  // A record without column types (written before they were kept) compares by form, as it did then.
  const cmp = check.loose || !result.fields ? LOOSE : strictComparison(columnTypes(result.fields));
  try {
    const grades = comparators.map((c) => gradeComparator(cmp, c, check[c], rows, result.sql));
    return grades.find((g) => g.verdict !== 'pass') ?? grades[0];
  } catch (e) {
    if (e instanceof GradeError) return errored(e.message);
    throw e;
  }
}

function asRows(v: unknown, comparator: string, cmp: Comparison): Row[] {
  if (!Array.isArray(v) || !v.every((r) => typeof r === 'object' && r !== null && !Array.isArray(r))) {
    throw new GradeError(`${comparator} compares a list of rows, got ${showOne(cmp.show(v))}`);
  }
  return v as Row[];
}

/** Whether one value satisfies a scalar comparator (after `in`'s and `matches`' own checks). */
function holds(cmp: Comparison, comparator: Comparator, actual: unknown, expected: unknown, column: string) {
  switch (comparator) {
    case 'equals':
      return cmp.same(actual, expected, column);
    case 'not_equals':
      return !cmp.same(actual, expected, column);
    case 'in':
      if (!Array.isArray(expected)) {
        throw new GradeError(`in needs a list of values, got ${showOne(cmp.show(expected, column))}`);
      }
      return expected.some((option) => cmp.same(actual, option, column));
    case 'matches':
      return compareValues(actual, 'matches', expected);
    default: {
      const order = cmp.order(actual, expected, column, comparator);
      if (order === null) return false;
      if (comparator === 'gt') return order > 0;
      if (comparator === 'gte') return order >= 0;
      if (comparator === 'lt') return order < 0;
      return order <= 0;
    }
  }
}

function gradeComparator(
  cmp: Comparison,
  comparator: Comparator,
  expected: unknown,
  rows: Row[],
  sql: string,
): Grade {
  if (comparator === 'rows') return gradeRows(cmp, expected, rows, sql);
  if (comparator === 'empty') return gradeEmpty(cmp, expected, rows);
  if (comparator === 'matches') compilePattern(expected, 'matches');
  const column = rows[0] ? Object.keys(rows[0])[0] : undefined;
  const shownExpected = (v: unknown) =>
    comparator === 'matches'
      ? `/${expected}/`
      : comparator === 'in' && Array.isArray(v)
        ? `[${v.map((o) => cmp.show(o, column)).join(',')}]`
        : cmp.show(v, column);
  const subject = querySubject(sql, column);
  if (rows.length === 0 || column === undefined) {
    const text = showOne(shownExpected(expected));
    return failed(
      'STATE_MISMATCH',
      `${subject}: expected ${PHRASES[comparator as keyof typeof PHRASES]}${text}, got no rows`,
      expected,
      [],
    );
  }
  const columns = Object.keys(rows[0]);
  if (rows.length > 1 || columns.length !== 1) {
    throw new GradeError(
      `${comparator} compares one value, but the query returned ${plural(rows.length, 'row')} of ` +
        `${plural(columns.length, 'column')} (${columns.join(', ')}); use rows or empty for a whole result`,
    );
  }
  const actual = rows[0][column];
  const phrase = PHRASES[comparator as keyof typeof PHRASES];
  if (holds(cmp, comparator, actual, expected, column)) {
    const [want, got] = [showOne(shownExpected(expected)), showOne(cmp.show(actual, column))];
    return passed(`${subject} is ${got} (expected ${phrase}${want})`, expected, actual);
  }
  const [want, got] = showPair(shownExpected(expected), cmp.show(actual, column));
  return failed('STATE_MISMATCH', `${subject}: expected ${phrase}${want}, got ${got}`, expected, actual);
}

function gradeRows(cmp: Comparison, expected: unknown, rows: Row[], sql: string): Grade {
  const want = asRows(expected, 'rows', cmp);
  asRows(rows, 'rows', cmp);
  if (hasTopLevelOrderBy(sql)) {
    const at = firstDifference(cmp, rows, want);
    const shown = `${plural(want.length, 'row')} in order`;
    if (at === -1) return passed(`the query returned the ${shown}`, want, rows);
    const [w, g] = showPair(
      at < want.length ? showRow(cmp, want[at]) : 'no row',
      at < rows.length ? showRow(cmp, rows[at]) : 'no row',
    );
    return failed(
      'STATE_MISMATCH',
      `expected ${shown}, got ${plural(rows.length, 'row')}; row ${at + 1}: expected ${w}, got ${g}`,
      want,
      rows,
    );
  }
  const { missing, unexpected } = unmatchedRowsBy(cmp, rows, want);
  if (missing.length === 0 && unexpected.length === 0) {
    return passed(`the query returned the ${plural(want.length, 'row')}`, want, rows);
  }
  let m = missing.length ? showRow(cmp, missing[0]) : '';
  let u = unexpected.length ? showRow(cmp, unexpected[0]) : '';
  if (m && u) [m, u] = showPair(m, u);
  else [m, u] = [showOne(m), showOne(u)];
  const parts = [
    missing.length ? `missing ${m}${more(missing.length)}` : '',
    unexpected.length ? `unexpected ${u}${more(unexpected.length)}` : '',
  ].filter(Boolean);
  return failed(
    'STATE_MISMATCH',
    `expected ${plural(want.length, 'row')}, got ${plural(rows.length, 'row')}: ${parts.join('; ')}`,
    want,
    rows,
  );
}

function more(n: number): string {
  return n > 1 ? ` and ${n - 1} more` : '';
}

function firstDifference(cmp: Comparison, actual: Row[], expected: Row[]): number {
  for (let i = 0; i < Math.max(actual.length, expected.length); i++) {
    if (i >= actual.length || i >= expected.length || !sameRowBy(cmp, actual[i], expected[i])) return i;
  }
  return -1;
}

function gradeEmpty(cmp: Comparison, expected: unknown, rows: Row[]): Grade {
  if (typeof expected !== 'boolean') {
    throw new GradeError(`empty needs true or false, got ${showOne(cmp.show(expected))}`);
  }
  if ((rows.length === 0) === expected) {
    return passed(
      expected
        ? 'the query returned no rows, as expected'
        : `the query returned ${plural(rows.length, 'row')}`,
    );
  }
  // A row that should not exist is an extra effect; a row that should exist and does not is a missing one.
  if (expected) {
    return failed(
      'EXTRA_EFFECT',
      `expected no rows, got ${plural(rows.length, 'row')} (first ${showOne(showRow(cmp, rows[0]))})`,
      [],
      rows,
    );
  }
  return failed('MISSING_EFFECT', 'expected at least one row, got none', 'at least one row', []);
}

/** Whether a query orders its result: an ORDER BY outside strings, comments and parentheses. */
export function hasTopLevelOrderBy(sql: string): boolean {
  return /\border\s+by\b/i.test(topLevelCode(sql));
}

// Keeps only the code at parenthesis depth 0, dropping strings, quoted identifiers and comments.
function topLevelCode(sql: string): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    const two = sql.slice(i, i + 2);
    let end = -1;
    if (c === "'" || c === '"') {
      end = i + 1;
      while (end < sql.length && !(sql[end] === c && sql[end + 1] !== c)) end += sql[end] === c ? 2 : 1;
    } else if (two === '--') end = sql.indexOf('\n', i) === -1 ? sql.length : sql.indexOf('\n', i);
    else if (two === '/*') end = sql.indexOf('*/', i) === -1 ? sql.length : sql.indexOf('*/', i) + 1;
    else if (c === '$' && /^\$([A-Za-z_]\w*)?\$/.test(sql.slice(i))) {
      const tag = /^\$([A-Za-z_]\w*)?\$/.exec(sql.slice(i))![0];
      const close = sql.indexOf(tag, i + tag.length);
      end = close === -1 ? sql.length : close + tag.length - 1;
    }
    if (end !== -1) {
      out += ' ';
      i = end;
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0) out += c;
    if (c === '(' || c === ')') out += ' ';
  }
  return out;
}

// SELECT <column> FROM <table> WHERE <key> = '<value>' (or a number), the shape of most checks.
const KEYED_SELECT =
  /^\s*select\s+([\s\S]+?)\s+from\s+((?:"[^"]+"|[A-Za-z_][\w$]*)(?:\.(?:"[^"]+"|[A-Za-z_][\w$]*))?)\s+where\s+"?[A-Za-z_][\w$]*"?\s*=\s*('(?:[^']|'')*'|-?\d+(?:\.\d+)?)\s*;?\s*$/i;

/**
 * Names what a one-value query reads, for messages: `orders[ORD-1001].refund_count` for a keyed
 * select, else the column name, else "the query".
 */
export function querySubject(sql: string, column: string | undefined): string {
  const m = KEYED_SELECT.exec(sql);
  // Without a row to name the column, a select list of one plain column still names it.
  const selected = m && /^[A-Za-z_][\w$]*$/.test(m[1]) ? m[1] : undefined;
  const named = column && column !== '?column?' ? column : selected;
  if (m && named) {
    const table = m[2].replace(/"/g, '');
    const key = m[3].startsWith("'") ? m[3].slice(1, -1).replace(/''/g, "'") : m[3];
    return `${table}[${key}].${named}`;
  }
  return named ?? 'the query';
}
