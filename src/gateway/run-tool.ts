// Runs one twin tool against a database: preconditions, then its statements in one transaction,
// shaped by `returns` (docs/formats/twin.md). Database errors become error answers, never throws:
// a SQLSTATE the twin declares under `errors:` is the tool's own error, any other one the harness's.
import type { Tool } from '../config/schema.js';
import type { RowChange } from '../model/episode.js';
import type { Sandbox, SqlSession } from '../sandbox/types.js';
import { bindNamedParams, splitStatements } from '../sql/named-params.js';
import { fillPlaceholders } from './canonical.js';

/** What the tool answered: a result, or an error with an HTTP status and a code. */
export type ToolAnswer =
  | { ok: true; status: 200; result: unknown }
  | {
      ok: false;
      status: number;
      code: string;
      message: string;
      /** The tool's own SQL failed (not a declared not_found, precondition or errors entry): not the agent's answer to grade. */
      harness?: true;
      /** The database's SQLSTATE, when it gave one. */
      sqlstate?: string;
    };

/** The answer and the net row changes the run committed. */
export interface ToolRun {
  answer: ToolAnswer;
  changes: RowChange[];
}

/** commit: the normal run; rollback: run, answer, undo; first-statement: commit only the first statement. */
export type RunMode = 'commit' | 'rollback' | 'first-statement';

export interface RunOptions {
  mode: RunMode;
  /** Check preconditions first (default true). */
  preconditions?: boolean;
}

type Args = Record<string, unknown>;

// Thrown inside the transaction so the sandbox rolls it back; carries the answer out.
class Undo {
  constructor(readonly answer: ToolAnswer) {}
}

const statementsOf = new WeakMap<Tool, string[]>();

function statements(tool: Tool): string[] {
  let list = statementsOf.get(tool);
  if (!list) {
    list = splitStatements(tool.sql ?? '');
    statementsOf.set(tool, list);
  }
  return list;
}

/** Runs the tool on `db` and returns its answer; SQL errors are answers too. */
export async function runTool(db: Sandbox, tool: Tool, args: Args, opts: RunOptions): Promise<ToolRun> {
  if (tool.sql === undefined)
    return { answer: { ok: true, status: 200, result: tool.static ?? null }, changes: [] };
  try {
    const { value, changes } = await db.transaction(async (tx) => {
      if (opts.preconditions !== false) {
        const failed = await failedPrecondition(tx, tool, args);
        if (failed) throw new Undo(failed);
      }
      const list = opts.mode === 'first-statement' ? statements(tool).slice(0, 1) : statements(tool);
      let rows: Record<string, unknown>[] = [];
      for (const sql of list) {
        const bound = bindNamedParams(sql, args);
        rows = (await tx.query(bound.text, bound.values)).rows;
      }
      const answer = shapeAnswer(tool, args, rows);
      if (opts.mode === 'rollback') throw new Undo(answer);
      return answer;
    });
    return { answer: value, changes };
  } catch (err) {
    if (err instanceof Undo) return { answer: err.answer, changes: [] };
    return { answer: raisedErrorAnswer(tool, err) ?? sqlErrorAnswer(err), changes: [] };
  }
}

/** The error of the first precondition whose query does not return a truthy first column, or null. */
async function failedPrecondition(tx: SqlSession, tool: Tool, args: Args): Promise<ToolAnswer | null> {
  for (const p of tool.preconditions) {
    const bound = bindNamedParams(p.query, args);
    const { rows } = await tx.query(bound.text, bound.values);
    const first = rows[0] ? Object.values(rows[0])[0] : undefined;
    if (!truthy(first)) {
      const message = fillPlaceholders(p.error.message ?? `Precondition failed: ${p.error.code}`, args);
      return { ok: false, status: p.error.status, code: p.error.code, message };
    }
  }
  return null;
}

/** SQL truthiness of a first column, whatever form the driver returned it in. */
export function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === '') return false;
  if (typeof v === 'number' || typeof v === 'bigint') return Number(v) !== 0;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    // numeric columns arrive as strings: '0.00' is false like 0.
    return s !== 'f' && s !== 'false' && Number(s) !== 0;
  }
  return true;
}

function shapeAnswer(tool: Tool, args: Args, rows: Record<string, unknown>[]): ToolAnswer {
  if (tool.returns === 'none') return { ok: true, status: 200, result: { ok: true } };
  if (tool.returns === 'many') return { ok: true, status: 200, result: rows };
  if (rows.length > 0) return { ok: true, status: 200, result: rows[0] };
  if (!tool.not_found) return { ok: true, status: 200, result: null };
  const nf = tool.not_found;
  return {
    ok: false,
    status: nf.status,
    code: nf.code,
    message: fillPlaceholders(nf.message ?? 'Not found.', args),
  };
}

/**
 * The tool error a SQL error stands for when the twin declares its SQLSTATE under `errors:` (a
 * `RAISE ... USING ERRCODE` in the tool's SQL or a function it calls): the declared status and
 * code, and the raised message with its DETAIL and HINT on lines of their own, so the message can
 * carry values the SQL computed. Null for any other error: that one is the harness's.
 */
export function raisedErrorAnswer(tool: Tool, err: unknown): ToolAnswer | null {
  const e = err as {
    code?: unknown;
    severity?: unknown;
    message?: unknown;
    detail?: unknown;
    hint?: unknown;
  } | null;
  if (!tool.errors || typeof e?.code !== 'string' || !Object.hasOwn(tool.errors, e.code)) return null;
  // Only an error the server sent (it has a severity) carries a SQLSTATE: a socket error's code
  // ('EPIPE' is five capitals too) is a lost connection, never the tool's answer.
  if (typeof e.severity !== 'string') return null;
  const declared = tool.errors[e.code];
  const lines = [e.message, e.detail, e.hint].filter((l): l is string => typeof l === 'string' && l !== '');
  return {
    ok: false,
    status: declared.status,
    code: declared.code,
    message: lines.join('\n') || declared.code,
  };
}

/**
 * Maps a database error to an answer: integrity errors 409, bad values 422, anything else 500. Each
 * is marked `harness`: the twin declared no such answer, so the episode cannot be graded.
 */
export function sqlErrorAnswer(err: unknown): ToolAnswer {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  const sqlstate = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  const fields = { message, harness: true as const, ...(sqlstate ? { sqlstate } : {}) };
  if (sqlstate?.startsWith('23')) return { ok: false, status: 409, code: 'CONSTRAINT_VIOLATION', ...fields };
  if (sqlstate?.startsWith('22')) return { ok: false, status: 422, code: 'INVALID_VALUE', ...fields };
  return { ok: false, status: 500, code: 'TOOL_ERROR', ...fields };
}

/**
 * Whether a SQL error can come from the call itself (its values, its data, its concurrency) rather
 * than from the database server: the suite's statements all prepared before the run, so any error
 * with a SQLSTATE outside connection (08), resources (53), operator intervention (57), system (58)
 * and internal (XX) classes is one the calls provoked.
 */
export function provokedByCall(sqlstate: string | undefined): boolean {
  return sqlstate !== undefined && !['08', '53', '57', '58', 'XX'].includes(sqlstate.slice(0, 2));
}
