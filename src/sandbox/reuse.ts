// Putting a used clone back to the template's state, so the next episode gets a database without a
// CREATE DATABASE (which copies the whole template, system catalogs included, and whose drop waits
// for a checkpoint). The cost follows what the episode changed, not the size of the database:
//   - the change log says which rows changed; every key it touched is deleted and the rows the log
//     saw first are inserted again from their images, with triggers and foreign keys off
//     (session_replication_role = replica: nothing the user's triggers do runs twice);
//   - sequences get the values they had in the template (nextval is not logged);
//   - the result is verified by fingerprint: the row-hash sums of what was deleted and re-inserted
//     must cancel the sums of what the log recorded, or the log missed a write;
//   - anything the log cannot undo makes the database unfit, and it is dropped and re-cloned: DDL of
//     any kind (an event trigger, owned by the log role and out of reach of suite SQL and agents,
//     notes every CREATE, ALTER, DROP, COMMENT, GRANT and REVOKE, including disabling a trigger),
//     a change to the database's own settings, large objects, prepared transactions, a table
//     whose rows do not survive a JSON image (json columns keep their text, jsonb does not).
// Needs a superuser admin (session_replication_role and event triggers); otherwise clones are
// dropped as before.
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { TableInfo } from './catalog.js';
import type { Cluster } from './cluster.js';
import { AUDIT_SCHEMA, ident, literal } from './names.js';
import { NumberText, parseRowJson } from './values.js';

const A = ident(AUDIT_SCHEMA);
const MODULUS = 1n << 256n;

/** What putting a clone back needs to know about its template, read once at build. */
export interface ReuseFacts {
  /** Every sequence (quoted, qualified) and its state in the template. */
  sequences: { name: string; value: string; called: boolean }[];
  /** Per table key: the columns an INSERT may set (generated ones left out), or null: not restorable. */
  columns: Record<string, string[] | null>;
}

/** The state of one clone that no episode may change without the database being re-cloned. */
export interface Baseline {
  /** DDL statements noted so far (the harness's own grants count too, see PgSandbox.exposeUrl). */
  ddl: string;
  /** The database's catalog row and its per-database settings, as tuple versions. */
  database: string;
}

/**
 * SQL (run by the admin in the template, after the triggers) that installs the DDL note: a table and
 * an event trigger function of the log role, and the event trigger itself (superusers only).
 */
export function installDdlNote(logRole: string, suiteRole: string): string {
  const L = ident(logRole);
  return `
SET LOCAL ROLE ${L};
CREATE TABLE ${A}.ddl (tag text NOT NULL);
CREATE FUNCTION ${A}.note_ddl() RETURNS event_trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
  INSERT INTO ${A}.ddl (tag) VALUES (TG_TAG);
END $fn$;
REVOKE ALL ON ${A}.ddl FROM PUBLIC;
REVOKE ALL ON FUNCTION ${A}.note_ddl() FROM PUBLIC;
GRANT SELECT ON ${A}.ddl TO ${ident(suiteRole)};
RESET ROLE;
CREATE EVENT TRIGGER stategate_ddl ON ddl_command_start EXECUTE PROCEDURE ${A}.note_ddl();
ALTER EVENT TRIGGER stategate_ddl ENABLE ALWAYS`;
}

/** Reads the baseline of the connected database (as any role that may read the DDL note). */
export const BASELINE = `
SELECT (SELECT count(*) FROM ${A}.ddl)::text AS ddl,
       (SELECT d.xmin::text || d.ctid::text || ':' || coalesce(
          (SELECT string_agg(s.xmin::text || s.ctid::text, ',' ORDER BY s.ctid)
             FROM pg_catalog.pg_db_role_setting s WHERE s.setdatabase = d.oid), '')
          FROM pg_catalog.pg_database d WHERE d.datname = current_database()) AS database`;

/** Reads what putting clones back needs from the template (as the admin, before it closes). */
export async function readReuseFacts(
  admin: pg.ClientBase,
  tables: TableInfo[],
  version: number,
): Promise<ReuseFacts> {
  const seqs = await admin.query<{ name: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'S' ORDER BY 1`,
  );
  const sequences: ReuseFacts['sequences'] = [];
  if (seqs.rows.length > 0) {
    // The sequence relations themselves: is_called and a last_value set by setval(.., false) too.
    const r = await admin.query<{ name: string; value: string; called: boolean }>(
      seqs.rows
        .map(
          (s) =>
            `SELECT ${literal(s.name)} AS name, last_value::text AS value, is_called AS called FROM ${s.name}`,
        )
        .join(' UNION ALL '),
    );
    sequences.push(...r.rows);
  }
  const generated = version >= 120000 ? "AND a.attgenerated = ''" : '';
  const cols = await admin.query<{ rel: string; cols: string[] }>(
    `SELECT '"' || replace(n.nspname, '"', '""') || '"."' || replace(c.relname, '"', '""') || '"' AS rel, array_agg(a.attname::text ORDER BY a.attnum) AS cols
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE a.attnum > 0 AND NOT a.attisdropped ${generated} AND a.attrelid = ANY($1::regclass[])
      GROUP BY 1`,
    [tables.map((t) => t.sql)],
  );
  // Keyed as names.ts quotes them (always quoted), which is how TableInfo.sql names a table.
  const byRel = new Map(cols.rows.map((r) => [r.rel, r.cols]));
  const columns: ReuseFacts['columns'] = {};
  for (const t of tables) {
    // A json column keeps its text (spaces, key order, duplicate keys); its jsonb image does not.
    const lossy = t.columns.some((c) => c.type.type === 'json' || c.type.element === 'json');
    columns[t.key] = lossy ? null : (byRel.get(t.sql) ?? null);
  }
  return { sequences, columns };
}

/** The 256-bit row-hash of one row image (as fingerprint.ts sums them). */
function rowHash(image: string): bigint {
  return BigInt(`0x${createHash('sha256').update(image, 'utf8').digest('hex')}`);
}

interface TableUndo {
  /** One image per key the log touched (PK tables), or net counts per image (tables without one). */
  touched: Map<string, string>;
  initial: Map<string, string | null>;
  bag: Map<string, number>;
  /** Sum of the log's new images minus its old images. */
  logSum: bigint;
}

function keyOf(image: string, pk: string[]): string {
  const row = parseRowJson(image) as Record<string, unknown>;
  return JSON.stringify(
    pk.map((c) => row[c]),
    (_k, v) => (v instanceof NumberText ? v.text : v),
  );
}

/** Folds the log (in order) into what to undo per table. */
function undoPlan(
  log: { tbl: string; old: string | null; new: string | null }[],
  tables: Map<string, TableInfo>,
): Map<string, TableUndo> | string {
  const plan = new Map<string, TableUndo>();
  for (const entry of log) {
    const table = tables.get(entry.tbl);
    if (!table) return `the change log names an unknown table ${JSON.stringify(entry.tbl)}`;
    let undo = plan.get(entry.tbl);
    if (!undo) {
      undo = { touched: new Map(), initial: new Map(), bag: new Map(), logSum: 0n };
      plan.set(entry.tbl, undo);
    }
    if (entry.new !== null) undo.logSum += rowHash(entry.new);
    if (entry.old !== null) undo.logSum -= rowHash(entry.old);
    const pk = table.primaryKey;
    if (!pk) {
      if (entry.new !== null) undo.bag.set(entry.new, (undo.bag.get(entry.new) ?? 0) + 1);
      if (entry.old !== null) undo.bag.set(entry.old, (undo.bag.get(entry.old) ?? 0) - 1);
      continue;
    }
    for (const [image, existed] of [
      [entry.old, true],
      [entry.new, false],
    ] as const) {
      if (image === null) continue;
      const key = keyOf(image, pk);
      if (!undo.touched.has(key)) undo.touched.set(key, image);
      if (!undo.initial.has(key)) undo.initial.set(key, existed ? image : null);
    }
  }
  return plan;
}

const sumOf = (images: string[]) => images.reduce((s, i) => s + rowHash(i), 0n);
const asArray = (images: string[]) => `[${images.join(',')}]`;

/** Undoes one table's changes; returns the images deleted and inserted, as the server renders them. */
async function undoTable(
  client: pg.ClientBase,
  table: TableInfo,
  columns: string[],
  undo: TableUndo,
): Promise<{ deleted: string[]; inserted: string[] }> {
  const T = table.sql;
  const cols = columns.map(ident).join(', ');
  const insert = async (images: string[]) =>
    images.length === 0
      ? []
      : (
          await client.query<{ j: string }>(
            `INSERT INTO ${T} AS y (${cols}) OVERRIDING SYSTEM VALUE
             SELECT ${cols} FROM jsonb_populate_recordset(NULL::${T}, $1::jsonb) RETURNING to_jsonb(y)::text AS j`,
            [asArray(images)],
          )
        ).rows.map((r) => r.j);
  const pk = table.primaryKey;
  if (pk) {
    const match = pk.map((c) => `x.${ident(c)} = k.${ident(c)}`).join(' AND ');
    const gone = await client.query<{ j: string }>(
      `DELETE FROM ${T} AS x USING jsonb_populate_recordset(NULL::${T}, $1::jsonb) AS k
        WHERE ${match} RETURNING to_jsonb(x)::text AS j`,
      [asArray([...undo.touched.values()])],
    );
    const back = [...undo.initial.values()].filter((i): i is string => i !== null);
    return { deleted: gone.rows.map((r) => r.j), inserted: await insert(back) };
  }
  const remove = [...undo.bag].filter(([, n]) => n > 0);
  let deleted: string[] = [];
  if (remove.length > 0) {
    const gone = await client.query<{ j: string }>(
      `WITH want AS (SELECT w.j, w.n FROM unnest($1::jsonb[], $2::int4[]) AS w(j, n)),
            pick AS (SELECT t.ctid AS id, to_jsonb(t) AS j, row_number() OVER (PARTITION BY to_jsonb(t)) AS k
                       FROM ${T} AS t WHERE to_jsonb(t) IN (SELECT j FROM want))
       DELETE FROM ${T} AS x USING pick JOIN want USING (j)
        WHERE x.ctid = pick.id AND pick.k <= want.n RETURNING to_jsonb(x)::text AS j`,
      [remove.map(([i]) => i), remove.map(([, n]) => n)],
    );
    deleted = gone.rows.map((r) => r.j);
  }
  const back = [...undo.bag].flatMap(([image, n]) => (n < 0 ? Array.from({ length: -n }, () => image) : []));
  return { deleted, inserted: await insert(back) };
}

/** What a put-back needs of one clone. */
export interface PutBack {
  cluster: Cluster;
  database: string;
  tables: TableInfo[];
  reuse: ReuseFacts;
  baseline: Baseline;
}

/**
 * Puts a clone back to the template's state. Every other session of the database must be gone or
 * unable to log in again (the caller ended its pool and locked the agent's role). Returns null when
 * the database is back and verified, or why it is not (then it must be dropped, not reused).
 */
export async function putBack(p: PutBack): Promise<string | null> {
  const client = new pg.Client({ connectionString: p.cluster.url(p.database) });
  client.on('error', () => undefined);
  await client.connect();
  try {
    // Sessions still open (an agent's, a late harness query) end first; from PostgreSQL 14 the
    // call waits for them to be gone.
    const others =
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()';
    if (p.cluster.version >= 140000) {
      const r = await client.query<{ ok: boolean }>(
        `SELECT pg_terminate_backend(pid, 30000) AS ok FROM (${others}) AS s`,
      );
      if (r.rows.some((x) => !x.ok)) return 'a session of the database did not end';
    } else {
      await client.query(`SELECT pg_terminate_backend(pid) FROM (${others}) AS s`);
      for (let i = 0; (await client.query(others)).rowCount; i++) {
        if (i > 300) return 'a session of the database did not end';
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    await client.query(`BEGIN;
SET LOCAL session_replication_role = replica;
SET LOCAL search_path = pg_catalog, pg_temp;
SET LOCAL TimeZone = 'UTC';
SET LOCAL IntervalStyle = 'postgres';
SET LOCAL extra_float_digits = 1;
SET LOCAL bytea_output = 'hex'`);
    try {
      const why = await undo(client, p);
      if (why) {
        await client.query('ROLLBACK');
        return why;
      }
      await client.query('COMMIT');
      return null;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      return (e as Error).message;
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function undo(client: pg.Client, p: PutBack): Promise<string | null> {
  const state = await client.query<Baseline & { prepared: string; lo: string }>(
    `SELECT b.*, (SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database())::text AS prepared,
            (SELECT count(*) FROM pg_largeobject_metadata)::text AS lo FROM (${BASELINE}) AS b`,
  );
  const now = state.rows[0];
  if (now.ddl !== p.baseline.ddl) return 'a DDL statement ran in the database';
  if (now.database !== p.baseline.database) return "the database's own settings changed";
  if (now.prepared !== '0') return 'a prepared transaction is pending';
  if (now.lo !== '0') return 'the database holds large objects';
  const log = await client.query<{ tbl: string; old: string | null; new: string | null }>(
    `SELECT tbl, old::text AS old, new::text AS new FROM ${A}.changes ORDER BY id`,
  );
  const byKey = new Map(p.tables.map((t) => [t.key, t]));
  const plan = undoPlan(log.rows, byKey);
  if (typeof plan === 'string') return plan;
  for (const [key, undo] of plan) {
    const table = byKey.get(key)!;
    const columns = p.reuse.columns[key];
    if (!columns) return `table ${key} cannot be restored from its row images`;
    const { deleted, inserted } = await undoTable(client, table, columns, undo);
    // The log's sums telescope to (final - initial) per key; what was deleted must be the final rows
    // and what came back the initial ones, or a write went unlogged (or an image did not round-trip).
    const balance = (((undo.logSum - sumOf(deleted) + sumOf(inserted)) % MODULUS) + MODULUS) % MODULUS;
    if (balance !== 0n) return `table ${key} does not match its change log after the undo`;
  }
  const { sequences } = p.reuse;
  await client.query(`DELETE FROM ${A}.changes`);
  if (sequences.length > 0) {
    await client.query(
      'SELECT setval(s.name::regclass, s.value, s.called) FROM unnest($1::text[], $2::int8[], $3::bool[]) AS s(name, value, called)',
      [sequences.map((s) => s.name), sequences.map((s) => s.value), sequences.map((s) => s.called)],
    );
  }
  return null;
}
