// Change capture: a row trigger on every user table appends to_jsonb(OLD)/to_jsonb(NEW) to an audit
// log, and folding the log gives exact net row changes by primary key without ever scanning a
// table. The trigger functions are SECURITY DEFINER, so writes of roles that cannot see the
// audit schema are still recorded; they return NULL from AFTER triggers, so nothing the user's
// own triggers, defaults, sequences or constraints do changes.
import type { Row, RowChange, TableDiff } from '../record.js';
import type { TableInfo } from './catalog.js';
import { AUDIT_SCHEMA, ident, literal } from './names.js';
import { columnValue, parseRowJson } from './values.js';

const A = ident(AUDIT_SCHEMA);

/** SQL that creates the audit schema, its log and the trigger functions. */
export const INSTALL_AUDIT_SCHEMA = `
CREATE SCHEMA ${A};
CREATE TABLE ${A}.changes (
  id bigserial PRIMARY KEY,
  xid bigint NOT NULL DEFAULT txid_current(),
  tbl text NOT NULL,
  op "char" NOT NULL,
  old jsonb,
  new jsonb
);
CREATE FUNCTION ${A}.capture() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO ${A}.changes (tbl, op, new) VALUES (TG_ARGV[0], 'I', to_jsonb(NEW));
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO ${A}.changes (tbl, op, old, new) VALUES (TG_ARGV[0], 'U', to_jsonb(OLD), to_jsonb(NEW));
  ELSE
    INSERT INTO ${A}.changes (tbl, op, old) VALUES (TG_ARGV[0], 'D', to_jsonb(OLD));
  END IF;
  RETURN NULL;
END $fn$;
-- TRUNCATE fires no row triggers: log every row it is about to remove as a delete, so the diff stays exact.
CREATE FUNCTION ${A}.capture_truncate() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
  EXECUTE format('INSERT INTO ${A}.changes (tbl, op, old) SELECT %L, ''D'', to_jsonb(t) FROM %s AS t',
                 TG_ARGV[0], TG_RELID::regclass);
  RETURN NULL;
END $fn$;
REVOKE ALL ON SCHEMA ${A} FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA ${A} FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${A} FROM PUBLIC;
REVOKE ALL ON FUNCTION ${A}.capture(), ${A}.capture_truncate() FROM PUBLIC;
`;

/** SQL that attaches the capture triggers to one table. */
export function captureTriggers(table: TableInfo): string {
  const arg = literal(table.key);
  return `
CREATE TRIGGER stategate_capture AFTER INSERT OR UPDATE OR DELETE ON ${table.sql}
  FOR EACH ROW EXECUTE PROCEDURE ${A}.capture(${arg});
CREATE TRIGGER stategate_capture_truncate BEFORE TRUNCATE ON ${table.sql}
  FOR EACH STATEMENT EXECUTE PROCEDURE ${A}.capture_truncate(${arg});`;
}

/** Reads the log after a watermark (the JSON as text, so numbers stay exact). */
export const READ_LOG_AFTER = `SELECT tbl, op, old::text AS old, new::text AS new FROM ${A}.changes WHERE id > $1 ORDER BY id`;

/** Reads the log rows the current transaction wrote. */
export const READ_LOG_OF_TRANSACTION = `SELECT tbl, op, old::text AS old, new::text AS new FROM ${A}.changes
 WHERE xid = txid_current_if_assigned() ORDER BY id`;

/** The id of the last log row: the watermark of markInitial(). */
export const LOG_WATERMARK = `SELECT coalesce(max(id), 0)::text AS id FROM ${A}.changes`;

/** The tables with any log row since the template was built (the only ones whose fingerprint can differ). */
export const TOUCHED_TABLES = `SELECT tbl FROM ${A}.changes GROUP BY tbl`;

/** Empties the log (at template build, after fixtures: the template's content is the baseline). */
export const CLEAR_LOG = `TRUNCATE ${A}.changes RESTART IDENTITY`;

/** One log row as read from the database. */
export interface LogRow {
  tbl: string;
  op: string;
  old: string | null;
  new: string | null;
}

function toRow(json: string, table: TableInfo | undefined): Row {
  const raw = parseRowJson(json) as Record<string, unknown>;
  const out: Row = {};
  // Table column order, as a SELECT * shows the row (jsonb orders keys its own way).
  for (const c of table?.columns ?? []) if (c.name in raw) out[c.name] = columnValue(raw[c.name], c.type);
  for (const [k, v] of Object.entries(raw)) if (!(k in out)) out[k] = columnValue(v, undefined);
  return out;
}

interface KeyState {
  key: Row;
  /** The row at the start (undefined: absent), and now. */
  initial: Row | undefined;
  current: Row | undefined;
}

function pick(row: Row, columns: string[]): Row {
  return Object.fromEntries(columns.map((c) => [c, row[c]]));
}

/** Folds log rows (in log order) into the net row changes per table; tables without net change are left out. */
export function foldChanges(log: LogRow[], tables: TableInfo[]): TableDiff[] {
  const byKey = new Map(tables.map((t) => [t.key, t]));
  const keyed = new Map<string, Map<string, KeyState>>();
  const multisets = new Map<string, Map<string, { row: Row; count: number }>>();
  const order: string[] = [];

  for (const entry of log) {
    const table = byKey.get(entry.tbl);
    if (!keyed.has(entry.tbl) && !multisets.has(entry.tbl)) order.push(entry.tbl);
    const oldRow = entry.old === null ? undefined : toRow(entry.old, table);
    const newRow = entry.new === null ? undefined : toRow(entry.new, table);
    const pk = table?.primaryKey;
    if (!pk) {
      let bag = multisets.get(entry.tbl);
      if (!bag) multisets.set(entry.tbl, (bag = new Map()));
      const add = (row: Row, n: number) => {
        const id = JSON.stringify(row);
        const slot = bag.get(id) ?? { row, count: 0 };
        slot.count += n;
        bag.set(id, slot);
      };
      if (oldRow) add(oldRow, -1);
      if (newRow) add(newRow, 1);
      continue;
    }
    let states = keyed.get(entry.tbl);
    if (!states) keyed.set(entry.tbl, (states = new Map()));
    const state = (row: Row, existed: boolean): KeyState => {
      const key = pick(row, pk);
      const id = JSON.stringify(pk.map((c) => row[c]));
      let s = states.get(id);
      if (!s) states.set(id, (s = { key, initial: existed ? row : undefined, current: existed ? row : undefined }));
      return s;
    };
    // An update that changes the primary key is a delete of the old key and an insert of the new one.
    if (oldRow) state(oldRow, true).current = undefined;
    if (newRow) state(newRow, false).current = newRow;
  }

  const diffs: TableDiff[] = [];
  for (const name of order) {
    const diff: TableDiff = {
      table: name,
      primaryKey: byKey.get(name)?.primaryKey ?? null,
      inserted: [],
      updated: [],
      deleted: [],
    };
    for (const s of keyed.get(name)?.values() ?? []) {
      if (!s.initial && s.current) diff.inserted.push({ table: name, op: 'insert', key: s.key, after: s.current });
      else if (s.initial && !s.current) diff.deleted.push({ table: name, op: 'delete', key: s.key, before: s.initial });
      else if (s.initial && s.current && JSON.stringify(s.initial) !== JSON.stringify(s.current)) {
        diff.updated.push({ table: name, op: 'update', key: s.key, before: s.initial, after: s.current });
      }
    }
    for (const { row, count } of multisets.get(name)?.values() ?? []) {
      for (let n = 0; n < count; n++) diff.inserted.push({ table: name, op: 'insert', key: null, after: row });
      for (let n = 0; n < -count; n++) diff.deleted.push({ table: name, op: 'delete', key: null, before: row });
    }
    if (diff.inserted.length + diff.updated.length + diff.deleted.length > 0) diffs.push(diff);
  }
  return diffs;
}

/** The changes of a list of table diffs as one list: per table, inserts, updates, then deletes. */
export function flattenChanges(diffs: TableDiff[]): RowChange[] {
  return diffs.flatMap((d) => [...d.inserted, ...d.updated, ...d.deleted]);
}

/**
 * An order-independent fingerprint of a table's rows: sha256 over the sorted sha256 of each row's
 * text form, computed in the server. Duplicates count, so a table without a key is a multiset.
 */
export function fingerprintSql(table: TableInfo): string {
  return `SELECT encode(sha256(convert_to(coalesce(string_agg(h, '' ORDER BY h COLLATE "C"), ''), 'UTF8')), 'hex') AS fp
  FROM (SELECT encode(sha256(convert_to(t::text, 'UTF8')), 'hex') AS h FROM ${table.sql} AS t) AS rows`;
}
