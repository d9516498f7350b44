// Change capture: a row trigger on every user table appends to_jsonb(OLD)/to_jsonb(NEW) to an audit
// log, and folding the log gives exact net row changes by primary key without ever scanning a
// table. The log belongs to a role of its own (the log role), not to the role suite SQL runs as:
// twin SQL could otherwise delete its own transaction's log rows (or add forged ones) and hide
// what it did. The suite role may read the log and nothing more; the trigger functions are
// SECURITY DEFINER of the log role, so every write is still recorded; they return NULL from AFTER
// triggers, so nothing the user's own triggers, defaults, sequences or constraints do changes.
import type { Row, RowChange, TableDiff } from '../model/episode.js';
import type { TableInfo } from './catalog.js';
import { CANONICAL_SETTINGS, TABLE_SUMS_FUNCTION } from './fingerprint.js';
import { AUDIT_SCHEMA, ident, literal } from './names.js';
import { columnValue, parseRowJson } from './values.js';

const A = ident(AUDIT_SCHEMA);

/**
 * SQL that creates the audit schema, its log and the trigger functions, run by the admin as
 * `logRole`; `suiteRole` may read the log and, until REVOKE_TRIGGER_FUNCTIONS, attach the triggers.
 */
export function installAuditSchema(logRole: string, suiteRole: string): string {
  const L = ident(logRole);
  const S = ident(suiteRole);
  return `
CREATE SCHEMA ${A} AUTHORIZATION ${L};
SET LOCAL ROLE ${L};
${AUDIT_OBJECTS}
GRANT USAGE ON SCHEMA ${A} TO ${S};
GRANT SELECT ON ${A}.changes TO ${S};
GRANT EXECUTE ON FUNCTION ${A}.capture(), ${A}.capture_truncate(), ${A}.table_sums(regclass) TO ${S};
RESET ROLE`;
}

/**
 * Once the triggers are attached the suite role may not execute the trigger functions (a trigger
 * fires without it): it could attach them to a table of its own with another table's name and log
 * forged rows.
 */
export function revokeTriggerFunctions(logRole: string, suiteRole: string): string {
  return `SET LOCAL ROLE ${ident(logRole)};
REVOKE EXECUTE ON FUNCTION ${A}.capture(), ${A}.capture_truncate() FROM ${ident(suiteRole)};
RESET ROLE`;
}

const AUDIT_OBJECTS = `
CREATE TABLE ${A}.changes (
  id bigserial PRIMARY KEY,
  xid bigint NOT NULL DEFAULT txid_current(),
  tbl text NOT NULL,
  op "char" NOT NULL,
  old jsonb,
  new jsonb
);
CREATE FUNCTION ${A}.capture() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
${CANONICAL_SETTINGS} AS $fn$
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
${CANONICAL_SETTINGS} AS $fn$
BEGIN
  EXECUTE format('INSERT INTO ${A}.changes (tbl, op, old) SELECT %L, ''D'', to_jsonb(t) FROM %s AS t',
                 TG_ARGV[0], TG_RELID::regclass);
  RETURN NULL;
END $fn$;
${TABLE_SUMS_FUNCTION}
REVOKE ALL ON SCHEMA ${A} FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA ${A} FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${A} FROM PUBLIC;
REVOKE ALL ON FUNCTION ${A}.capture(), ${A}.capture_truncate(), ${A}.table_sums(regclass) FROM PUBLIC;
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

/**
 * Reads the log after a watermark (the JSON as text, so numbers stay exact). The watermark is the
 * server's own count (markInitial), written in place so the read can share a simple-protocol query;
 * anything but digits is refused.
 */
export function readLogAfter(watermark: string): string {
  if (!/^\d+$/.test(watermark)) throw new Error(`the change log's watermark is not a number: ${watermark}`);
  return `SELECT tbl, op, old::text AS old, new::text AS new FROM ${A}.changes WHERE id > ${watermark} ORDER BY id`;
}

/** Reads the log rows the current transaction wrote. */
export const READ_LOG_OF_TRANSACTION = `SELECT tbl, op, old::text AS old, new::text AS new FROM ${A}.changes
 WHERE xid = txid_current_if_assigned() ORDER BY id`;

/** The id of the last log row: the watermark of markInitial(). */
export const LOG_WATERMARK = `SELECT coalesce(max(id), 0)::text AS id FROM ${A}.changes`;

/** One log row as read from the database. */
export interface LogRow {
  tbl: string;
  op: string;
  old: string | null;
  new: string | null;
}

const EXACT_TYPES = new Set(['int8', 'numeric', 'money']);

/** Whether a table has a column whose numbers JSON.parse would round (int8, numeric). */
function needsExactNumbers(table: TableInfo | undefined): boolean {
  return !table || table.columns.some((c) => EXACT_TYPES.has(c.type.element ?? c.type.type));
}

function toRow(json: string, table: TableInfo | undefined, exact: boolean): Row {
  // JSON.parse is much faster, and exact for every other column type.
  const raw = (exact ? parseRowJson(json) : JSON.parse(json)) as Record<string, unknown>;
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

function getOrAdd<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
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
    const exact = needsExactNumbers(table);
    const oldRow = entry.old === null ? undefined : toRow(entry.old, table, exact);
    const newRow = entry.new === null ? undefined : toRow(entry.new, table, exact);
    const pk = table?.primaryKey;
    if (!pk) {
      const bag = getOrAdd(multisets, entry.tbl, () => new Map<string, { row: Row; count: number }>());
      const add = (row: Row, n: number) => {
        const slot = getOrAdd(bag, JSON.stringify(row), () => ({ row, count: 0 }));
        slot.count += n;
      };
      if (oldRow) add(oldRow, -1);
      if (newRow) add(newRow, 1);
      continue;
    }
    const states = getOrAdd(keyed, entry.tbl, () => new Map<string, KeyState>());
    const state = (row: Row, existed: boolean): KeyState =>
      getOrAdd(states, JSON.stringify(pk.map((c) => row[c])), () => ({
        key: pick(row, pk),
        initial: existed ? row : undefined,
        current: existed ? row : undefined,
      }));
    // An update that changes the primary key is a delete of the old key and an insert of the new one.
    if (oldRow) state(oldRow, true).current = undefined;
    if (newRow) state(newRow, false).current = newRow;
  }

  const diffs: TableDiff[] = [];
  for (const name of order) {
    const info = byKey.get(name);
    const diff: TableDiff = {
      table: name,
      primaryKey: info?.primaryKey ?? null,
      ...(info ? { columnTypes: Object.fromEntries(info.columns.map((c) => [c.name, c.type.type])) } : {}),
      inserted: [],
      updated: [],
      deleted: [],
    };
    for (const s of keyed.get(name)?.values() ?? []) {
      if (!s.initial && s.current)
        diff.inserted.push({ table: name, op: 'insert', key: s.key, after: s.current });
      else if (s.initial && !s.current)
        diff.deleted.push({ table: name, op: 'delete', key: s.key, before: s.initial });
      else if (s.initial && s.current && JSON.stringify(s.initial) !== JSON.stringify(s.current)) {
        diff.updated.push({ table: name, op: 'update', key: s.key, before: s.initial, after: s.current });
      }
    }
    for (const { row, count } of multisets.get(name)?.values() ?? []) {
      for (let n = 0; n < count; n++)
        diff.inserted.push({ table: name, op: 'insert', key: null, after: row });
      for (let n = 0; n < -count; n++)
        diff.deleted.push({ table: name, op: 'delete', key: null, before: row });
    }
    if (diff.inserted.length + diff.updated.length + diff.deleted.length > 0) diffs.push(diff);
  }
  return diffs;
}

/** The changes of a list of table diffs as one list: per table, inserts, updates, then deletes. */
export function flattenChanges(diffs: TableDiff[]): RowChange[] {
  return diffs.flatMap((d) => [...d.inserted, ...d.updated, ...d.deleted]);
}
