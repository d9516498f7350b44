// Expectations on the row diff of the episode's database, initial vs final (record.diff). A table
// without a primary key is diffed as a multiset: its changes are inserts and deletes of whole rows,
// counted the same way.
import type { ExpectationOf } from '../config/schema.js';
import type { CallRecord, Row, RowChange, StateDiff, TableDiff } from '../model/episode.js';
import { type Comparison, LOOSE, strictComparison } from './typed.js';
import { formatValue } from './values.js';
import { failed, type Grade, passed, plural } from './verdicts.js';

type Op = RowChange['op'];
const COUNTS = [
  ['inserted', 'insert'],
  ['updated', 'update'],
  ['deleted', 'delete'],
] as const;
const PAST: Record<Op, string> = { insert: 'inserted', update: 'updated', delete: 'deleted' };

/** The changes of one operation on one table in the diff (none when the table did not change). */
function changesOf(diff: StateDiff, table: string, op: Op): RowChange[] {
  const t: TableDiff | undefined = diff.tables[table];
  if (!t) return [];
  return op === 'insert' ? t.inserted : op === 'update' ? t.updated : t.deleted;
}

/** Names a changed row for a message: its key values, or the whole row for a table without a key. */
export function rowName(change: RowChange): string {
  if (change.key) {
    const values = Object.values(change.key);
    return values.length === 1 ? String(values[0]) : values.map((v) => String(v)).join(',');
  }
  return formatValue(change.after ?? change.before ?? null);
}

function rowNames(changes: RowChange[]): string {
  const shown = changes.slice(0, 3).map(rowName).join(', ');
  return changes.length > 3 ? `${shown}, ...` : shown;
}

/** How a table's values compare: by their column's type, as query results (by form in older records). */
function comparisonOf(diff: StateDiff, table: string): Comparison {
  const types = diff.tables[table]?.columnTypes;
  return types ? strictComparison(types) : LOOSE;
}

/**
 * Whether a changed row's values before or after the change match every `where` value by their
 * column's type: a text column holding `...12:00:00+02:00` is not `...10:00:00Z`, a timestamptz is.
 */
function matchesWhere(change: RowChange, where: Row, cmp: Comparison): boolean {
  const fits = (row: Row | undefined) =>
    row !== undefined &&
    Object.entries(where).every(([column, value]) => column in row && cmp.same(row[column], value, column));
  return fits(change.before) || fits(change.after) || fits(change.key ?? undefined);
}

function describeWhere(where: Row | undefined): string {
  if (!where || Object.keys(where).length === 0) return '';
  return ` where ${Object.entries(where)
    .map(([k, v]) => `${k} = ${formatValue(v)}`)
    .join(' and ')}`;
}

/**
 * `changes`: the given counts (only those) equal the diff's counts of changed rows in the table,
 * filtered by `where`. A count below the expected one is a missing effect, above it an extra one;
 * the label follows the first mismatch in the order inserted, updated, deleted.
 */
export function gradeChanges(spec: ExpectationOf<'changes'>['changes'], diff: StateDiff): Grade {
  const where = spec.where;
  const cmp = comparisonOf(diff, spec.table);
  const expected: Record<string, number> = {};
  const actual: Record<string, number> = {};
  const mismatches: string[] = [];
  let label: 'MISSING_EFFECT' | 'EXTRA_EFFECT' | undefined;
  for (const [count, op] of COUNTS) {
    const want = spec[count];
    if (want === undefined) continue;
    const rows = changesOf(diff, spec.table, op).filter((c) => !where || matchesWhere(c, where, cmp));
    expected[count] = want;
    actual[count] = rows.length;
    if (rows.length === want) continue;
    label ??= rows.length < want ? 'MISSING_EFFECT' : 'EXTRA_EFFECT';
    mismatches.push(
      `expected ${plural(want, `${count} row`)}, got ${rows.length}${rows.length ? ` (${rowNames(rows)})` : ''}`,
    );
  }
  const subject = `${spec.table}${describeWhere(where)}`;
  if (Object.keys(expected).length === 0) {
    return passed(`${subject}: no count given, nothing to check`, expected, actual);
  }
  if (!label) {
    const counts = Object.entries(actual).map(([k, n]) => `${n} ${k}`);
    return passed(`${subject}: ${counts.join(', ')}, as expected`, expected, actual);
  }
  return failed(label, `${subject}: ${mismatches.join('; ')}`, expected, actual);
}

/** The counts of a table's changes, e.g. "1 inserted, 2 updated". */
function describeTable(t: TableDiff): string {
  const parts = COUNTS.filter(([count]) => t[count].length > 0).map(
    ([count]) => `${t[count].length} ${count}`,
  );
  return parts.join(', ');
}

/** `only_changes`: no table outside the list differs from its initial content. */
export function gradeOnlyChanges(allowed: string[], diff: StateDiff): Grade {
  const outside = Object.values(diff.tables)
    .filter((t) => !allowed.includes(t.table) && describeTable(t) !== '')
    .sort((a, b) => a.table.localeCompare(b.table));
  const scope = allowed.length ? `only ${allowed.join(', ')} may change` : 'nothing may change';
  if (outside.length === 0) return passed(`${scope}, and nothing else changed`, allowed, []);
  const named = outside.map((t) => `${t.table} (${describeTable(t)})`);
  return failed(
    'EXTRA_EFFECT',
    `${scope}, but ${named.join(' and ')} changed`,
    allowed,
    outside.map((t) => t.table),
  );
}

/**
 * `forbid_changes`: no such row operation happened on the table. Both the net diff and each call's
 * own changes count, so a row a call inserted and a later call deleted is still caught.
 */
export function gradeForbidChanges(
  spec: ExpectationOf<'forbid_changes'>['forbid_changes'],
  diff: StateDiff,
  calls: CallRecord[],
): Grade {
  const ops = spec.ops ?? ['insert', 'update', 'delete'];
  const found: string[] = [];
  for (const op of ops) {
    const net = changesOf(diff, spec.table, op);
    if (net.length > 0) {
      found.push(`${plural(net.length, `${PAST[op]} row`)} (${rowNames(net)})`);
      continue;
    }
    const byCall = calls.filter((c) => c.changes.some((ch) => ch.table === spec.table && ch.op === op));
    if (byCall.length > 0) {
      const seqs = byCall.map((c) => `${c.tool} #${c.seq}`).join(', ');
      found.push(`${PAST[op]} rows by ${seqs}, undone before the end`);
    }
  }
  const forbidden = ops.join('/');
  if (found.length === 0) return passed(`${spec.table}: no ${forbidden}, as required`, ops, []);
  return failed(
    'EXTRA_EFFECT',
    `${spec.table}: expected no ${forbidden}, got ${found.join('; ')}`,
    ops,
    found,
  );
}
