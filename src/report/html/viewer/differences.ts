// Where two repeats differ, as the page marks it: the first step whose call is not the same, the
// rows whose values are not the same, and within two values the part that differs. Pure, so the
// node tests check it with hand-made inputs, and the page bundles the same code.
import type { RowChange } from '../../../model/episode.js';
import type { CallView } from '../viewer-data.js';

/** A value as one line of JSON, keys in their order (the record's arguments are canonical already). */
export function show(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? String(value);
}

function sameCall(a: CallView, b: CallView): boolean {
  return (
    a.tool === b.tool &&
    show(a.args) === show(b.args) &&
    a.status === b.status &&
    a.code === b.code &&
    a.fault === b.fault &&
    a.effect === b.effect
  );
}

/** The 0-based index of the first step where the two call lists differ (one stopping counts); null when the same. */
export function firstStepDifference(a: readonly CallView[], b: readonly CallView[]): number | null {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (!x || !y || !sameCall(x, y)) return i;
  }
  return null;
}

/** Two strings split into their common prefix, the parts that differ, and their common suffix. */
export interface Split {
  prefix: string;
  a: string;
  b: string;
  suffix: string;
}

/** Splits two strings around where they differ (the common prefix and suffix never overlap). */
export function splitDifference(a: string, b: string): Split {
  let p = 0;
  const max = Math.min(a.length, b.length);
  while (p < max && a[p] === b[p]) p++;
  let s = 0;
  while (s < max - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  return {
    prefix: a.slice(0, p),
    a: a.slice(p, a.length - s),
    b: b.slice(p, b.length - s),
    suffix: a.slice(a.length - s),
  };
}

/** One row two repeats changed (matched by table, operation and key), and each column's two values. */
export interface RowPair {
  table: string;
  op: RowChange['op'];
  key: string;
  base: RowChange | null;
  head: RowChange | null;
  columns: { column: string; base: string; head: string; differs: boolean }[];
  /** Some column differs, or only one side made the change. */
  differs: boolean;
}

function rowOf(c: RowChange | null): Record<string, unknown> {
  return (c?.after ?? c?.before ?? {}) as Record<string, unknown>;
}

/** Lines up the row changes of two repeats, base order first, and marks what differs. */
export function pairRows(base: readonly RowChange[], head: readonly RowChange[]): RowPair[] {
  const id = (c: RowChange) => `${c.table}\u0000${c.op}\u0000${show(c.key ?? c.after ?? c.before)}`;
  const heads = new Map<string, RowChange[]>();
  for (const c of head) heads.set(id(c), [...(heads.get(id(c)) ?? []), c]);
  const pairs: [RowChange | null, RowChange | null][] = [];
  for (const c of base) {
    const match = heads.get(id(c))?.shift() ?? null;
    pairs.push([c, match]);
  }
  for (const rest of heads.values()) for (const c of rest) pairs.push([null, c]);
  return pairs.map(([b, h]) => {
    const any = (b ?? h) as RowChange;
    const rb = rowOf(b);
    const rh = rowOf(h);
    const names = [...new Set([...Object.keys(rb), ...Object.keys(rh)])];
    const columns = names.map((column) => {
      const vb = b ? show(rb[column]) : '';
      const vh = h ? show(rh[column]) : '';
      return { column, base: vb, head: vh, differs: b !== null && h !== null && vb !== vh };
    });
    return {
      table: any.table,
      op: any.op,
      key: any.key ? Object.values(any.key).map(show).join(', ') : '(no primary key)',
      base: b,
      head: h,
      columns,
      differs: b === null || h === null || columns.some((c) => c.differs),
    };
  });
}

/** The repeat a side shows first (an index): the head's first failing one, the base's first passing one, else the first. */
export function defaultRepeat(grades: readonly ('pass' | 'fail' | 'error')[], side: 'base' | 'head'): number {
  // The head's failure is what a reviewer came for; the base's pass is what it should be held against.
  const order = side === 'head' ? (['fail', 'error'] as const) : (['pass'] as const);
  for (const want of order) {
    const i = grades.indexOf(want);
    if (i >= 0) return i;
  }
  return 0;
}
