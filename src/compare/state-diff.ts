// The state that differs between two episodes. Both start from the same initial state, so each
// side's net diff determines its final rows; comparing those gives (table, key, column, base, head)
// for every value that ended differently, rows only one side has included. Columns the suite or the
// scenario ignores (`ignore_columns`) are left out and named in `ignored` when they differed; grading
// never reads this list, so an expectation naming such a column still reads it.
import type { Expectation, IgnoreColumns, Scenario } from '../config/schema.js';
import { stateRead } from '../expectations/registry.js';
import { strictComparison } from '../expectations/typed.js';
import { elide, renderArgs, renderValue } from '../model/call-text.js';
import { canonicalJson } from '../model/canonical-json.js';
import type { Row, RowChange, StateDiff, TableDiff } from '../model/episode.js';
import type { StateDifference } from '../model/report.js';

/** The value of a side where the row does not exist. */
export const ABSENT = '(absent)';
/** The column of a difference that is a whole row present on one side only. */
export const WHOLE_ROW = '(row)';
/** How many differences a case keeps by default. */
export const STATE_DIFF_CAP = 20;

export interface StateDifferences {
  differences: StateDifference[];
  /** Differences left out by the cap. */
  cut: number;
  /** `table.column` of ignored columns whose values differed (or, keyless, were cut from a row shown), sorted. */
  ignored: string[];
}

/** The suite's ignore list with the scenario's added, per table. */
export function mergeIgnoreColumns(...lists: (IgnoreColumns | undefined)[]): IgnoreColumns {
  const out = new Map<string, Set<string>>();
  for (const list of lists)
    for (const [table, columns] of Object.entries(list ?? {})) {
      const set = out.get(table) ?? new Set<string>();
      for (const c of columns) set.add(c);
      out.set(table, set);
    }
  return Object.fromEntries([...out].map(([t, cs]) => [t, [...cs].sort()]));
}

function withoutColumns(row: Row, ignored: ReadonlySet<string>): Row {
  if (ignored.size === 0) return row;
  return Object.fromEntries(Object.entries(row).filter(([c]) => !ignored.has(c)));
}

function tableWithout(t: TableDiff | undefined, ignored: ReadonlySet<string>): TableDiff | undefined {
  if (!t || ignored.size === 0) return t;
  const strip = (c: RowChange): RowChange => ({
    ...c,
    before: c.before && withoutColumns(c.before, ignored),
    after: c.after && withoutColumns(c.after, ignored),
  });
  return {
    ...t,
    inserted: t.inserted.map(strip),
    updated: t.updated.map(strip),
    deleted: t.deleted.map(strip),
  };
}

type FinalRows = Map<string, { key: string; row: Row | undefined }>;

function renderKey(change: RowChange, primaryKey: string[]): string {
  const source = change.key ?? change.after ?? change.before ?? {};
  return primaryKey.map((c) => renderValue(source[c])).join(',');
}

function changesOf(t: TableDiff | undefined): RowChange[] {
  return t ? [...t.inserted, ...t.updated, ...t.deleted] : [];
}

/** Per key: the row's final value on each side (undefined: absent). */
function keyedFinals(
  b: TableDiff | undefined,
  h: TableDiff | undefined,
  primaryKey: string[],
): [FinalRows, FinalRows] {
  const index = (t: TableDiff | undefined) => {
    const m = new Map<string, RowChange>();
    for (const c of changesOf(t))
      m.set(canonicalJson(c.key ?? primaryKey.map((k) => (c.after ?? c.before)?.[k])), c);
    return m;
  };
  const bi = index(b);
  const hi = index(h);
  const finals: [FinalRows, FinalRows] = [new Map(), new Map()];
  for (const id of [...new Set([...bi.keys(), ...hi.keys()])]) {
    const bc = bi.get(id);
    const hc = hi.get(id);
    const key = renderKey((bc ?? hc)!, primaryKey);
    // A side that did not touch the row still has its initial value: the other side's `before`.
    const initial = (bc ?? hc)!.before;
    finals[0].set(id, { key, row: bc ? bc.after : initial });
    finals[1].set(id, { key, row: hc ? hc.after : initial });
  }
  return finals;
}

function keyedDifferences(
  table: string,
  b: TableDiff | undefined,
  h: TableDiff | undefined,
  primaryKey: string[],
  ignored: ReadonlySet<string>,
  hid: Set<string>,
): StateDifference[] {
  const [bf, hf] = keyedFinals(b, h, primaryKey);
  // By the column's type, as query results compare: 150 and 150.00 in a numeric column are one value.
  const types = b?.columnTypes ?? h?.columnTypes;
  const cmp = types ? strictComparison(types) : null;
  const same = (x: unknown, y: unknown, column: string) => {
    try {
      if (cmp) return cmp.same(x, y, column);
    } catch {
      // A value the type cannot compare exactly (a JSON number past 2^53): by its form.
    }
    return canonicalJson(x) === canonicalJson(y);
  };
  const out: StateDifference[] = [];
  const ids = [...bf.keys()].sort((x, y) => compareKeys(bf.get(x)!.key, bf.get(y)!.key));
  for (const id of ids) {
    const { key, row: br } = bf.get(id)!;
    const hr = hf.get(id)!.row;
    if (!br && !hr) continue;
    if (!br || !hr) {
      out.push({ table, key, column: WHOLE_ROW, base: br ?? ABSENT, head: hr ?? ABSENT });
      continue;
    }
    for (const column of [...new Set([...Object.keys(hr), ...Object.keys(br)])]) {
      if (!(column in br && column in hr && same(br[column], hr[column], column))) {
        // A key column is never ignored: it says which row the difference is of.
        if (ignored.has(column) && !primaryKey.includes(column)) {
          hid.add(`${table}.${column}`);
          continue;
        }
        out.push({
          table,
          key,
          column,
          base: column in br ? br[column] : ABSENT,
          head: column in hr ? hr[column] : ABSENT,
        });
      }
    }
  }
  return out;
}

/** Net signed multiset of one side's row changes in a table without a primary key. */
function netRows(t: TableDiff | undefined, into: Map<string, { row: Row; n: number }>, sign: number): void {
  for (const c of changesOf(t)) {
    for (const [row, s] of [
      [c.after, 1],
      [c.before, -1],
    ] as const) {
      if (!row) continue;
      const id = canonicalJson(row);
      const entry = into.get(id) ?? { row, n: 0 };
      entry.n += sign * s;
      into.set(id, entry);
    }
  }
}

function keylessDifferences(
  table: string,
  b: TableDiff | undefined,
  h: TableDiff | undefined,
): StateDifference[] {
  const net = new Map<string, { row: Row; n: number }>();
  netRows(b, net, 1);
  netRows(h, net, -1);
  const out: StateDifference[] = [];
  for (const id of [...net.keys()].sort()) {
    const { row, n } = net.get(id)!;
    const key = elide(renderArgs(row), 60);
    // Each surplus copy of a row on one side is one row the other side lacks.
    for (let i = 0; i < Math.abs(n); i++) {
      out.push({ table, key, column: WHOLE_ROW, base: n > 0 ? row : ABSENT, head: n > 0 ? ABSENT : row });
    }
  }
  return out;
}

function compareKeys(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}

interface Reader {
  critical: boolean;
  text: string;
  tables: (table: string) => boolean;
}

function mentions(text: string, word: string): boolean {
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\w-])${escaped}($|[^\\w-])`, 'i').test(text);
}

/** What each expectation reads of the state: the tables it names, and its text for key mentions. */
function readers(expectations: Expectation[]): Reader[] {
  const out: Reader[] = [];
  for (const e of expectations) {
    const critical = e.critical ?? false;
    const read = stateRead(e);
    if (!read) continue;
    if ('text' in read)
      out.push({ critical, text: read.text, tables: (table) => mentions(read.text, table) });
    else {
      const allowed = new Set(read.outside);
      out.push({ critical, text: '', tables: (table) => !allowed.has(table) });
    }
  }
  return out;
}

function relevance(d: StateDifference, rs: Reader[]): number {
  const reading = rs.filter((r) => r.tables(d.table));
  const critical = reading.filter((r) => r.critical);
  if (critical.some((r) => d.key.split(',').every((k) => mentions(r.text, k)))) return 0;
  if (critical.length > 0) return 1;
  if (reading.length > 0) return 2;
  return 3;
}

/**
 * Lists every final value that differs between the base and the head episode, the rows and tables
 * the scenario's critical expectations read first, at most `cap` of them.
 */
export function stateDifferences(
  base: StateDiff,
  head: StateDiff,
  scenario?: Scenario,
  cap = STATE_DIFF_CAP,
  ignore: IgnoreColumns = {},
): StateDifferences {
  const all: StateDifference[] = [];
  const hid = new Set<string>();
  for (const table of [...new Set([...Object.keys(base.tables), ...Object.keys(head.tables)])].sort()) {
    const ignored = new Set(Object.hasOwn(ignore, table) ? ignore[table] : []);
    const b = base.tables[table];
    const h = head.tables[table];
    const primaryKey = b?.primaryKey ?? h?.primaryKey ?? null;
    if (primaryKey && primaryKey.length > 0) {
      all.push(...keyedDifferences(table, b, h, primaryKey, ignored, hid));
    } else {
      // Without a key a row is its values: rows are compared without the ignored columns.
      const full = keylessDifferences(table, b, h).length;
      const kept = keylessDifferences(table, tableWithout(b, ignored), tableWithout(h, ignored));
      // Named when ignoring it hid a difference, or left it out of a row still shown.
      for (const c of ignored) {
        const inRows = [...changesOf(b), ...changesOf(h)].some(
          (r) => c in (r.after ?? {}) || c in (r.before ?? {}),
        );
        if (inRows && (kept.length < full || kept.length > 0)) hid.add(`${table}.${c}`);
      }
      all.push(...kept);
    }
  }
  const rs = readers(scenario?.expect ?? []);
  const ranked = all.map((d, i) => ({ d, i, r: relevance(d, rs) })).sort((x, y) => x.r - y.r || x.i - y.i);
  const kept = ranked.slice(0, Math.max(0, cap)).map((x) => x.d);
  return { differences: kept, cut: all.length - kept.length, ignored: [...hid].sort() };
}
