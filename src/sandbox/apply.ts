// Putting content into a database: schema and fixture SQL files, fixture rows, scenario state.
// Rows go in with one bound JSON parameter per batch (jsonb_populate_recordset), so the server
// converts each value for its column's type and nothing is ever spliced into SQL text.

import type { Row } from '../model/episode.js';
import { splitStatements } from '../sql/named-params.js';
import { definerRevokes, OWN_DEFINER_ROUTINES } from './definers.js';
import { ident, qualified } from './names.js';
import { statementTimeout } from './statement-timeout.js';
import { refusalNote } from './suite-role.js';
import type { Sandbox, SqlSession } from './types.js';

/** The server error fields this module reports. */
interface ServerError {
  message: string;
  /** SQLSTATE, e.g. 42501 (insufficient_privilege). */
  code?: string;
  position?: string;
  detail?: string;
  hint?: string;
  where?: string;
}

function describe(err: ServerError): string {
  return [err.message, err.detail && `(${err.detail})`, err.hint && `hint: ${err.hint}`]
    .filter(Boolean)
    .join(' ');
}

function lineCol(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, col: offset - before.lastIndexOf('\n') };
}

function excerpt(statement: string): string {
  const flat = statement.replace(/\s+/g, ' ').trim();
  return flat.length > 100 ? `${flat.slice(0, 97)}...` : flat;
}

/** Where each statement of a file starts (by searching the split statements in order). */
function statementOffsets(sql: string): { text: string; offset: number }[] {
  let cursor = 0;
  return splitStatements(sql).map((text) => {
    const offset = sql.indexOf(text, cursor);
    cursor = offset < 0 ? cursor : offset + text.length;
    return { text, offset: Math.max(offset, 0) };
  });
}

/** An SQL file failed to apply; the message names the file, the line and the statement. */
export class SqlFileError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(message);
    this.name = 'SqlFileError';
  }
}

/**
 * Runs an SQL file (all statements in one round trip). On failure, names the file, line and
 * column, and the failing statement: from the server's error position, or, for errors without a
 * position, by replaying the statements one at a time in a transaction that is rolled back.
 */
export async function applySqlFile(session: SqlSession, file: string, sql: string): Promise<void> {
  try {
    await session.query(sql);
  } catch (e) {
    const err = e as ServerError;
    const statements = statementOffsets(sql);
    if (err.position) {
      const at = Number(err.position) - 1;
      const { line, col } = lineCol(sql, at);
      const stmt = [...statements].reverse().find((s) => s.offset <= at);
      throw new SqlFileError(
        file,
        `${file}:${line}:${col}: ${describe(err)}${stmt ? ` in: ${excerpt(stmt.text)}` : ''}${refusalNote(err)}`,
      );
    }
    // A file of one statement needs no replay (which could not run one that refuses a transaction).
    const failing =
      statements.length === 1 ? statements[0] : await replayToFind(session, statements, err.message);
    if (failing) {
      const { line, col } = lineCol(sql, failing.offset);
      throw new SqlFileError(
        file,
        `${file}:${line}:${col}: ${describe(err)} in: ${excerpt(failing.text)}${refusalNote(err)}`,
      );
    }
    throw new SqlFileError(file, `${file}: ${describe(err)}${refusalNote(err)}`);
  }
}

async function replayToFind(
  session: SqlSession,
  statements: { text: string; offset: number }[],
  message: string,
): Promise<{ text: string; offset: number } | undefined> {
  // Diagnostics only: the failed file was one implicit transaction, so replaying it from the start
  // reproduces the failure; a different failure means the replay cannot tell, and we say less.
  let found: { text: string; offset: number } | undefined;
  try {
    await session.query('BEGIN');
    for (const s of statements) {
      try {
        await session.query(s.text);
      } catch (e) {
        if ((e as ServerError).message === message) found = s;
        break;
      }
    }
  } catch {
    // The replay itself could not start: report without a statement.
  } finally {
    await session.query('ROLLBACK').catch(() => undefined);
  }
  return found;
}

/** Splits the project's table name (`orders`, `billing.invoices`) into schema and table. */
export function splitTableKey(key: string): { schema: string; name: string } {
  const dot = key.indexOf('.');
  return dot < 0 ? { schema: 'public', name: key } : { schema: key.slice(0, dot), name: key.slice(dot + 1) };
}

const BATCH = 1000;

function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
}

/**
 * Inserts rows into one table. Columns a row leaves out get their defaults (rows are grouped by
 * their column set); json/jsonb columns take any JSON value, other columns the value's text form.
 * Must run inside a transaction: a failing batch is retried row by row under savepoints to name
 * the row that failed.
 */
export async function insertRows(
  session: SqlSession,
  table: string,
  rows: Row[],
  where: string,
): Promise<void> {
  const { schema, name } = splitTableKey(table);
  const target = qualified(schema, name);
  let start = 0;
  while (start < rows.length) {
    const columns = Object.keys(rows[start]);
    const signature = columns.join('\u0000');
    let end = start + 1;
    while (end < rows.length && end - start < BATCH && Object.keys(rows[end]).join('\u0000') === signature)
      end++;
    await insertBatch(session, target, columns, rows.slice(start, end), start, `${where}: table ${table}`);
    start = end;
  }
  await advanceSequences(session, target, new Set(rows.flatMap((r) => Object.keys(r))));
}

// The serial and identity columns of a table, with their sequences (null for other columns).
const OWNED_SEQUENCES = `
SELECT a.attname::text AS column, pg_get_serial_sequence($1, a.attname::text) AS sequence
  FROM pg_attribute a
 WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
   AND pg_get_serial_sequence($1, a.attname::text) IS NOT NULL`;

/**
 * Moves the sequence of each serial or identity column the rows gave explicit values past the
 * highest value now in it, so the next INSERT that takes the default (a twin's) does not collide
 * with a fixture's or a scenario's id. A sequence already past it stays where it is.
 */
async function advanceSequences(session: SqlSession, target: string, given: Set<string>): Promise<void> {
  if (given.size === 0) return;
  const owned = await session.query(OWNED_SEQUENCES, [target]);
  for (const { column, sequence } of owned.rows as { column: string; sequence: string }[]) {
    if (!given.has(column)) continue;
    // The column is an identifier (quoted, never a value); the sequence is a bound parameter.
    await session.query(
      `SELECT setval($1::regclass, t.top) FROM (SELECT max(${ident(column)})::int8 AS top FROM ${target}) t
        WHERE t.top IS NOT NULL AND t.top >= coalesce(pg_sequence_last_value($1::regclass), 0)`,
      [sequence],
    );
  }
}

async function insertBatch(
  session: SqlSession,
  target: string,
  columns: string[],
  rows: Row[],
  first: number,
  where: string,
): Promise<void> {
  const list = columns.map(ident).join(', ');
  const sql =
    columns.length === 0
      ? `INSERT INTO ${target} DEFAULT VALUES`
      : `INSERT INTO ${target} (${list}) SELECT ${list} FROM jsonb_populate_recordset(NULL::${target}, $1::jsonb)`;
  const run = (batch: Row[]) =>
    columns.length === 0
      ? Promise.all(batch.map(() => session.query(sql)))
      : session.query(sql, [toJson(batch)]);
  await session.query('SAVEPOINT sg_rows');
  try {
    await run(rows);
    await session.query('RELEASE SAVEPOINT sg_rows');
    return;
  } catch (e) {
    await session.query('ROLLBACK TO SAVEPOINT sg_rows');
    if (rows.length === 1) throw rowError(where, first + 1, e as ServerError);
  }
  for (let i = 0; i < rows.length; i++) {
    try {
      await run([rows[i]]);
    } catch (e) {
      await session.query('ROLLBACK TO SAVEPOINT sg_rows');
      throw rowError(where, first + i + 1, e as ServerError);
    }
  }
  // Every row went in alone: the batch failed for a reason no single row has, and the rows are in now.
  await session.query('RELEASE SAVEPOINT sg_rows');
}

function rowError(where: string, row: number, err: ServerError): Error {
  return new Error(`${where}: row ${row}: ${describe(err)}${refusalNote(err)}`);
}

/** A scenario's state on top of the template: rows per table, then SQL (docs/formats/scenario.md). */
export interface ScenarioState {
  rows: Record<string, Row[]>;
  sql?: string[];
}

/**
 * Applies a scenario's state to a sandbox in one transaction: rows first (an unknown table or
 * column is an error that names it), then the SQL statements. Run before markInitial().
 */
/** SQLSTATE 57014: the statement was cancelled (here, by statement_timeout). */
const QUERY_CANCELED = '57014';

/** The scenario's state did not finish within the episode's timeout: the suite's doing, the same on every attempt. */
export class StateTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StateTimeoutError';
  }
}

export async function applyScenarioState(
  sandbox: Sandbox,
  state: ScenarioState,
  tables: Record<string, string[] | null>,
  timeoutMs?: number,
): Promise<void> {
  for (const table of Object.keys(state.rows)) {
    if (!(table in tables)) {
      const known = Object.keys(tables).join(', ') || 'none';
      throw new Error(`state.rows: unknown table ${JSON.stringify(table)} (tables: ${known})`);
    }
  }
  // Most scenarios start from the template as it is: no transaction, no round trips.
  if (Object.keys(state.rows).length === 0 && (state.sql ?? []).length === 0) return;
  await sandbox.transaction(async (tx) => {
    // Bounded by the episode's timeout: a state.sql that never ends must not hold a worker forever.
    if (timeoutMs !== undefined)
      await tx.query("SELECT set_config('statement_timeout', $1, true)", [statementTimeout(timeoutMs)]);
    for (const [table, rows] of Object.entries(state.rows)) await insertRows(tx, table, rows, 'state.rows');
    for (const [i, sql] of (state.sql ?? []).entries()) {
      try {
        await tx.query(sql);
      } catch (e) {
        const err = e as ServerError;
        if (err.code === QUERY_CANCELED)
          throw new StateTimeoutError(
            `state.sql[${i}] ran past the episode's timeout of ${timeoutMs} ms: ${excerpt(sql)}`,
          );
        throw new Error(`state.sql[${i}]: ${describe(err)} in: ${excerpt(sql)}${refusalNote(err)}`);
      }
    }
    // A SECURITY DEFINER routine state.sql created is the suite role's like the template's.
    if ((state.sql ?? []).length > 0) {
      const definers = await tx.query(OWN_DEFINER_ROUTINES);
      for (const revoke of definerRevokes(definers.rows as { routine: string }[])) await tx.query(revoke);
    }
  });
}
