// Reading the row diff of the episode's database, initial vs final (record.diff), for the kinds graded
// on it. A table without a primary key is diffed as a multiset: its changes are inserts and deletes
// of whole rows, counted the same way.
import type { Row, RowChange, StateDiff, TableDiff } from '../model/episode.js';
import { type Comparison, LOOSE, strictComparison } from './typed.js';
import { formatValue } from './values.js';

export type Op = RowChange['op'];
export const COUNTS = [
  ['inserted', 'insert'],
  ['updated', 'update'],
  ['deleted', 'delete'],
] as const;
export const PAST: Record<Op, string> = { insert: 'inserted', update: 'updated', delete: 'deleted' };

/** The changes of one operation on one table in the diff (none when the table did not change). */
export function changesOf(diff: StateDiff, table: string, op: Op): RowChange[] {
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

export function rowNames(changes: RowChange[]): string {
  const shown = changes.slice(0, 3).map(rowName).join(', ');
  return changes.length > 3 ? `${shown}, ...` : shown;
}

/** How a table's values compare: by their column's type, as query results (by form in older records). */
export function comparisonOf(diff: StateDiff, table: string): Comparison {
  const types = diff.tables[table]?.columnTypes;
  return types ? strictComparison(types) : LOOSE;
}

/**
 * Whether a changed row's values before or after the change match every `where` value by their
 * column's type: a text column holding `...12:00:00+02:00` is not `...10:00:00Z`, a timestamptz is.
 */
export function matchesWhere(change: RowChange, where: Row, cmp: Comparison): boolean {
  const fits = (row: Row | undefined) =>
    row !== undefined &&
    Object.entries(where).every(([column, value]) => column in row && cmp.same(row[column], value, column));
  return fits(change.before) || fits(change.after) || fits(change.key ?? undefined);
}

export function describeWhere(where: Row | undefined): string {
  if (!where || Object.keys(where).length === 0) return '';
  return ` where ${Object.entries(where)
    .map(([k, v]) => `${k} = ${formatValue(v)}`)
    .join(' and ')}`;
}

/** The counts of a table's changes, e.g. "1 inserted, 2 updated". */
export function describeTable(t: TableDiff): string {
  const parts = COUNTS.filter(([count]) => t[count].length > 0).map(
    ([count]) => `${t[count].length} ${count}`,
  );
  return parts.join(', ');
}
