// Putting a used clone back to the template's state, so the next episode gets a database without a
// CREATE DATABASE (which copies the whole template, system catalogs included, and whose drop waits
// for a checkpoint). The cost follows what the episode changed, not the size of the database:
//   - the change log says which rows changed; in a session logged in as the template's own role
//     (never as the admin: the rows' constraints, indexes and casts may run suite code, which must
//     not run with the admin's rights), every key the log touched is put back to the image the log
//     saw first: updated in place, inserted again, or deleted, parents before children;
//   - verified against the log: the undo is logged like any write, and the whole log since the
//     template must then net to nothing, row image by row image (a user trigger that wrote more,
//     a cascade, an image that did not round-trip all fail it);
//   - then, as the admin (running no suite code): the log is emptied and every sequence gets its
//     template value back (nextval is not logged);
//   - anything the log cannot undo makes the database unfit, and it is dropped and re-cloned: DDL of
//     any kind (an event trigger, owned by the log role and out of reach of suite SQL and agents,
//     notes every CREATE, ALTER, DROP, COMMENT, GRANT and REVOKE, including disabling a trigger),
//     a change to the database's own settings, large objects, prepared transactions, a table
//     whose rows do not survive a JSON image (json columns keep their text, jsonb does not).
// Needs a superuser admin (event triggers); otherwise clones are dropped as before.
import type pg from 'pg';
import type { TableInfo } from './catalog.js';
import type { Cluster } from './cluster.js';
import { budgetedClient } from './connections.js';
import { AUDIT_SCHEMA, ident, literal } from './names.js';
import { NumberText, parseRowJson, SESSION_OPTIONS } from './values.js';

const A = ident(AUDIT_SCHEMA);

/** What putting a clone back needs to know about its template, read once at build. */
export interface ReuseFacts {
  /** Every sequence (quoted, qualified) and its state in the template. */
  sequences: { name: string; value: string; called: boolean }[];
  /** Per table key: the columns an INSERT may set (generated ones left out), or null: not restorable. */
  columns: Record<string, string[] | null>;
  /** Per table key: the columns an UPDATE may set back (no key, generated or GENERATED ALWAYS identity column). */
  updatable: Record<string, string[]>;
  /** Table keys, every table after the tables its foreign keys reference (as far as cycles allow). */
  order: string[];
  /** The suite's own triggers that fire in a normal session (quoted table, quoted name, ALWAYS or not). */
  triggers: { table: string; name: string; always: boolean }[];
  /** DDL statements in the template's note (Baseline.ddl of every new clone: it copies the note). */
  ddl: string;
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

/**
 * The database part of a baseline (Baseline.database) of the database `name` names (an SQL
 * expression): its catalog row and per-database settings live in shared catalogs, readable from
 * any database of the server.
 */
const databaseRow = (name: string) => `(SELECT d.xmin::text || d.ctid::text || ':' || coalesce(
          (SELECT string_agg(s.xmin::text || s.ctid::text, ',' ORDER BY s.ctid)
             FROM pg_catalog.pg_db_role_setting s WHERE s.setdatabase = d.oid), '')
          FROM pg_catalog.pg_database d WHERE d.datname = ${name})`;

/** Reads the baseline of the connected database (as any role that may read the DDL note). */
export const BASELINE = `
SELECT (SELECT count(*) FROM ${A}.ddl)::text AS ddl,
       ${databaseRow('current_database()')} AS database`;

/**
 * Reads the database part of the baseline of the database named $1, from any database (the admin's
 * own): a new clone's DDL note is the template's (ReuseFacts.ddl), so its baseline needs no
 * connection to the clone itself, whose every new login costs the server a backend and both
 * sides a password exchange.
 */
export const DATABASE_BASELINE = `SELECT ${databaseRow('$1')} AS database`;

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
  const quoted = `'"' || replace(n.nspname, '"', '""') || '"."' || replace(c.relname, '"', '""') || '"'`;
  const cols = await admin.query<{ rel: string; cols: string[]; always: string[] }>(
    `SELECT ${quoted} AS rel, array_agg(a.attname::text ORDER BY a.attnum) AS cols,
            array_agg(a.attname::text) FILTER (WHERE a.attidentity = 'a') AS always
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE a.attnum > 0 AND NOT a.attisdropped ${generated} AND a.attrelid = ANY($1::regclass[])
      GROUP BY 1`,
    [tables.map((t) => t.sql)],
  );
  // Keyed as names.ts quotes them (always quoted), which is how TableInfo.sql names a table.
  const byRel = new Map(cols.rows.map((r) => [r.rel, r]));
  const columns: ReuseFacts['columns'] = {};
  const updatable: ReuseFacts['updatable'] = {};
  for (const t of tables) {
    // A json column keeps its text (spaces, key order, duplicate keys); its jsonb image does not.
    const lossy = t.columns.some((c) => c.type.type === 'json' || c.type.element === 'json');
    const r = byRel.get(t.sql);
    columns[t.key] = lossy || !r ? null : r.cols;
    updatable[t.key] = (r?.cols ?? []).filter((c) => !t.primaryKey?.includes(c) && !r?.always?.includes(c));
  }
  const fks = await admin.query<{ child: string; parent: string }>(
    `SELECT (SELECT ${quoted} FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = f.conrelid) AS child,
            (SELECT ${quoted} FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = f.confrelid) AS parent
       FROM pg_constraint f WHERE f.contype = 'f'`,
  );
  const keyOfSql = new Map(tables.map((t) => [t.sql, t.key]));
  const parents = new Map<string, string[]>();
  for (const fk of fks.rows) {
    const child = keyOfSql.get(fk.child);
    const parent = keyOfSql.get(fk.parent);
    if (child && parent && child !== parent) parents.set(child, [...(parents.get(child) ?? []), parent]);
  }
  const order: string[] = [];
  const seen = new Set<string>();
  const visit = (key: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    for (const p of parents.get(key) ?? []) visit(p);
    order.push(key);
  };
  for (const t of tables) visit(t.key);
  const triggers = await admin.query<{ table: string; name: string; always: boolean }>(
    `SELECT (SELECT ${quoted} FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = t.tgrelid) AS table,
            '"' || replace(t.tgname, '"', '""') || '"' AS name, t.tgenabled = 'A' AS always
       FROM pg_trigger t WHERE NOT t.tgisinternal AND t.tgenabled IN ('O', 'A')
        AND t.tgname NOT IN ('stategate_capture', 'stategate_capture_truncate') ORDER BY 1, 2`,
  );
  const ddl = (await admin.query<{ ddl: string }>(`SELECT count(*)::text AS ddl FROM ${A}.ddl`)).rows[0].ddl;
  return { sequences, columns, updatable, order, triggers: triggers.rows, ddl };
}

function keyOf(image: string, pk: string[]): string {
  const row = parseRowJson(image) as Record<string, unknown>;
  return JSON.stringify(
    pk.map((c) => row[c]),
    (_k, v) => (v instanceof NumberText ? v.text : v),
  );
}

/** One table's net change since the template: per key its first and last image (null: absent). */
interface TableChange {
  keys: Map<string, { initial: string | null; current: string | null }>;
  /** Tables without a primary key: net count per row image. */
  bag: Map<string, number>;
}

/** Folds log rows (in log order) into each table's net change, by raw row image. */
function netChanges(
  log: { tbl: string; old: string | null; new: string | null }[],
  tables: Map<string, TableInfo>,
): Map<string, TableChange> | string {
  const out = new Map<string, TableChange>();
  for (const entry of log) {
    const table = tables.get(entry.tbl);
    if (!table) return `the change log names an unknown table ${JSON.stringify(entry.tbl)}`;
    let change = out.get(entry.tbl);
    if (!change) {
      change = { keys: new Map(), bag: new Map() };
      out.set(entry.tbl, change);
    }
    const pk = table.primaryKey;
    if (!pk) {
      if (entry.new !== null) change.bag.set(entry.new, (change.bag.get(entry.new) ?? 0) + 1);
      if (entry.old !== null) change.bag.set(entry.old, (change.bag.get(entry.old) ?? 0) - 1);
      continue;
    }
    // An update that changes the key is a delete of the old key and an insert of the new one.
    if (entry.old !== null) {
      const k = keyOf(entry.old, pk);
      const state = change.keys.get(k) ?? { initial: entry.old, current: entry.old };
      state.current = null;
      change.keys.set(k, state);
    }
    if (entry.new !== null) {
      const k = keyOf(entry.new, pk);
      const state = change.keys.get(k) ?? { initial: null, current: null };
      state.current = entry.new;
      change.keys.set(k, state);
    }
  }
  return out;
}

/** The first table whose net change is not nothing, or null. */
function notNetZero(changes: Map<string, TableChange>): string | null {
  for (const [table, change] of changes) {
    for (const s of change.keys.values()) if (s.initial !== s.current) return table;
    for (const n of change.bag.values()) if (n !== 0) return table;
  }
  return null;
}

const asArray = (images: string[]) => `[${images.join(',')}]`;

/** SQL that undoes one table's net change: rows to put back (insert, update) and rows to remove. */
function undoStatements(
  table: TableInfo,
  columns: string[],
  updatable: string[],
  change: TableChange,
): { restore: [string, unknown[]][]; remove: [string, unknown[]][] } {
  const T = table.sql;
  const cols = columns.map(ident).join(', ');
  const insert = (images: string[]): [string, unknown[]] => [
    `INSERT INTO ${T} (${cols}) OVERRIDING SYSTEM VALUE
     SELECT ${cols} FROM jsonb_populate_recordset(NULL::${T}, $1::jsonb)`,
    [asArray(images)],
  ];
  const restore: [string, unknown[]][] = [];
  const remove: [string, unknown[]][] = [];
  const pk = table.primaryKey;
  if (pk) {
    const match = pk.map((c) => `x.${ident(c)} = k.${ident(c)}`).join(' AND ');
    const states = [...change.keys.values()].filter((s) => s.initial !== s.current);
    const back = states.filter((s) => s.current === null).map((s) => s.initial!);
    const changed = states.filter((s) => s.initial !== null && s.current !== null).map((s) => s.initial!);
    const added = states.filter((s) => s.initial === null).map((s) => s.current!);
    if (back.length > 0) restore.push(insert(back));
    if (changed.length > 0 && updatable.length > 0) {
      restore.push([
        `UPDATE ${T} AS x SET ${updatable.map((c) => `${ident(c)} = k.${ident(c)}`).join(', ')}
           FROM jsonb_populate_recordset(NULL::${T}, $1::jsonb) AS k WHERE ${match}`,
        [asArray(changed)],
      ]);
    }
    if (added.length > 0) {
      remove.push([
        `DELETE FROM ${T} AS x USING jsonb_populate_recordset(NULL::${T}, $1::jsonb) AS k WHERE ${match}`,
        [asArray(added)],
      ]);
    }
    return { restore, remove };
  }
  const extra = [...change.bag].filter(([, n]) => n > 0);
  if (extra.length > 0) {
    remove.push([
      `WITH want AS (SELECT w.j, w.n FROM unnest($1::jsonb[], $2::int4[]) AS w(j, n)),
            pick AS (SELECT t.ctid AS id, to_jsonb(t) AS j, row_number() OVER (PARTITION BY to_jsonb(t)) AS k
                       FROM ${T} AS t WHERE to_jsonb(t) IN (SELECT j FROM want))
       DELETE FROM ${T} AS x USING pick JOIN want USING (j) WHERE x.ctid = pick.id AND pick.k <= want.n`,
      [extra.map(([i]) => i), extra.map(([, n]) => n)],
    ]);
  }
  const missing = [...change.bag].flatMap(([image, n]) =>
    n < 0 ? Array.from({ length: -n }, () => image) : [],
  );
  if (missing.length > 0) restore.push(insert(missing));
  return { restore, remove };
}

/** What a put-back needs of one clone. */
export interface PutBack {
  cluster: Cluster;
  database: string;
  /** The template's role (owner of the tables): the undo runs logged in as it. */
  owner: { name: string; password: string };
  tables: TableInfo[];
  reuse: ReuseFacts;
  baseline: Baseline;
}

const CANONICAL = `SET LOCAL search_path = pg_catalog, pg_temp;
SET LOCAL TimeZone = 'UTC';
SET LOCAL IntervalStyle = 'postgres';
SET LOCAL extra_float_digits = 1;
SET LOCAL bytea_output = 'hex'`;

const READ_LOG = `SELECT tbl, old::text AS old, new::text AS new FROM ${A}.changes ORDER BY id`;

/**
 * A client of the database, as the admin or as another role, in the cluster's connection budget;
 * errors end up in the caller's awaits.
 */
async function connect(cluster: Cluster, url: string): Promise<pg.Client> {
  const Client = budgetedClient(cluster.budget);
  const client = new Client({ connectionString: url, options: SESSION_OPTIONS });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/**
 * Puts a clone back to the template's state. Every other session of the database must be gone or
 * unable to log in again (the caller ended its pool and locked the agent's role). Returns null when
 * the database is back and verified, or why it is not (then it must be dropped, not reused).
 */
export async function putBack(p: PutBack): Promise<string | null> {
  const admin = await connect(p.cluster, p.cluster.url(p.database));
  try {
    let why = await endOtherSessions(admin, p.cluster.version);
    why ??= await unfit(admin, p.baseline);
    if (why) return why;
    const undone = await undoAsOwner(p);
    if (typeof undone === 'string') return undone;
    // The undo's own DDL (the suite's triggers off and on again) moves the baseline, and only it.
    const baseline = { ...p.baseline, ddl: undone.ddl };
    // As the admin, in a session that touches no user table: nothing of the suite runs here.
    why = await endOtherSessions(admin, p.cluster.version);
    if (why) return why;
    await admin.query(`BEGIN; ${CANONICAL}`);
    try {
      why = await unfit(admin, baseline);
      if (!why) {
        await admin.query(`DELETE FROM ${A}.changes`);
        const { sequences } = p.reuse;
        if (sequences.length > 0) {
          await admin.query(
            'SELECT setval(s.name::regclass, s.value, s.called) FROM unnest($1::text[], $2::int8[], $3::bool[]) AS s(name, value, called)',
            [sequences.map((s) => s.name), sequences.map((s) => s.value), sequences.map((s) => s.called)],
          );
        }
      }
      await admin.query(why ? 'ROLLBACK' : 'COMMIT');
      if (!why) p.baseline.ddl = baseline.ddl;
      return why;
    } catch (e) {
      await admin.query('ROLLBACK').catch(() => undefined);
      return (e as Error).message;
    }
  } catch (e) {
    return (e as Error).message;
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/** Ends every other session of the database (from PostgreSQL 14 waiting for them to be gone). */
async function endOtherSessions(admin: pg.Client, version: number): Promise<string | null> {
  const others =
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()';
  if (version >= 140000) {
    const r = await admin.query<{ ok: boolean }>(
      `SELECT pg_terminate_backend(pid, 30000) AS ok FROM (${others}) AS s`,
    );
    return r.rows.some((x) => !x.ok) ? 'a session of the database did not end' : null;
  }
  await admin.query(`SELECT pg_terminate_backend(pid) FROM (${others}) AS s`);
  for (let i = 0; (await admin.query(others)).rowCount; i++) {
    if (i > 300) return 'a session of the database did not end';
    await new Promise((r) => setTimeout(r, 100));
  }
  return null;
}

/** Why the database cannot be put back whatever its rows (see the file's header), or null. */
async function unfit(client: pg.Client, baseline: Baseline): Promise<string | null> {
  const state = await client.query<Baseline & { prepared: string; lo: string }>(
    `SELECT b.*, (SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database())::text AS prepared,
            (SELECT count(*) FROM pg_largeobject_metadata)::text AS lo FROM (${BASELINE}) AS b`,
  );
  const now = state.rows[0];
  if (now.ddl !== baseline.ddl) return 'a DDL statement ran in the database';
  if (now.database !== baseline.database) return "the database's own settings changed";
  if (now.prepared !== '0') return 'a prepared transaction is pending';
  if (now.lo !== '0') return 'the database holds large objects';
  return null;
}

/**
 * Undoes the logged changes in a session of the template's role; commits only when the log nets to
 * nothing. The suite's own triggers are off meanwhile (what they did is in the log and is undone
 * too; firing again they would write more). Returns the DDL count after, or why not.
 */
async function undoAsOwner(p: PutBack): Promise<{ ddl: string } | string> {
  const client = await connect(p.cluster, p.cluster.url(p.database, p.owner));
  try {
    await client.query(`BEGIN; ${CANONICAL}`);
    const byKey = new Map(p.tables.map((t) => [t.key, t]));
    const changes = netChanges((await client.query(READ_LOG)).rows, byKey);
    if (typeof changes === 'string') return changes;
    const plan: { restore: [string, unknown[]][]; remove: [string, unknown[]][] }[] = [];
    for (const key of p.reuse.order) {
      const change = changes.get(key);
      if (!change) continue;
      const columns = p.reuse.columns[key];
      if (!columns) return `table ${key} cannot be restored from its row images`;
      plan.push(undoStatements(byKey.get(key)!, columns, p.reuse.updatable[key] ?? [], change));
    }
    // Parents' rows come back before their children's; children's extra rows go before their
    // parents'. When a unique key is in the way (a row added with a value another row gets back),
    // removing first may work instead.
    const parentsFirst = [...plan.flatMap((t) => t.restore), ...plan.reverse().flatMap((t) => t.remove)];
    plan.reverse();
    const removeFirst = [
      ...plan
        .slice()
        .reverse()
        .flatMap((t) => t.remove),
      ...plan.flatMap((t) => t.restore),
    ];
    const { triggers } = p.reuse;
    if (plan.length > 0 && triggers.length > 0) {
      await client.query(triggers.map((t) => `ALTER TABLE ${t.table} DISABLE TRIGGER ${t.name}`).join(';\n'));
    }
    let failure: string | null = null;
    for (const order of [parentsFirst, removeFirst]) {
      await client.query('SAVEPOINT undo');
      try {
        for (const [sql, params] of order) await client.query(sql, params);
        failure = null;
        break;
      } catch (e) {
        failure = (e as Error).message;
        await client.query('ROLLBACK TO SAVEPOINT undo');
      }
    }
    if (failure) return `the undo failed: ${failure}`;
    if (plan.length > 0 && triggers.length > 0) {
      await client.query(
        triggers
          .map((t) => `ALTER TABLE ${t.table} ENABLE ${t.always ? 'ALWAYS ' : ''}TRIGGER ${t.name}`)
          .join(';\n'),
      );
    }
    // The undo was logged like any write: template to now must net to nothing.
    const after = netChanges((await client.query(READ_LOG)).rows, byKey);
    if (typeof after === 'string') return after;
    const off = notNetZero(after);
    if (off) return `table ${off} does not match the template after the undo`;
    // Exactly the undo's own ALTER TABLEs, one note each: a constraint or cast of the suite that
    // ran DDL during the undo would show here.
    const toggled = plan.length > 0 ? 2 * triggers.length : 0;
    const ddl = (await client.query<Baseline>(BASELINE)).rows[0].ddl;
    if (Number(ddl) !== Number(p.baseline.ddl) + toggled) return 'a DDL statement ran during the undo';
    await client.query('COMMIT');
    return { ddl };
  } finally {
    await client.end().catch(() => undefined);
  }
}
