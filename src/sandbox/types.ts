// The one interface every database engine implements (docs/architecture.md, sandbox/).
import type { EngineName, TemplateSpec } from '../model/engine.js';
import type { Row, RowChange, StateDiff } from '../model/episode.js';

export type { EngineName, TemplateSpec };

/** A query's rows and column type names, values converted to plain JSON-able JS. */
export interface QueryRows {
  rows: Row[];
  fields: { name: string; type: string }[];
}

/** A connection to one database that the gateway and the grader use. */
export interface SqlSession {
  /** Runs one statement with `$1..$n` parameters (bound, never spliced). */
  query(sql: string, params?: unknown[]): Promise<QueryRows>;
}

/** One episode's private database, a clone of the template. */
export interface Sandbox extends SqlSession {
  /** The database name (carries the run prefix, so a later run can sweep leftovers). */
  readonly name: string;
  /** A URL of this database as the template's unprivileged owner role (for the harness, never the agent). */
  readonly url: string;
  /**
   * Runs `fn` in one transaction on a dedicated connection and commits; rolls back when it throws.
   * `changes` are the net row changes the transaction made (the gateway records them per call).
   */
  transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<{ value: T; changes: RowChange[] }>;
  /**
   * Runs one query in a read-only transaction that is always rolled back (expectation queries),
   * cancelled by the server after `timeoutMs` when given.
   */
  readOnly(
    sql: string,
    timeoutMs?: number,
  ): Promise<{ rows: Record<string, unknown>[]; fields: { name: string; type: string }[] }>;
  /** Marks the current state as the initial state the episode's diff is taken against. */
  markInitial(): Promise<void>;
  /** The row diff of every table, initial vs now, and a fingerprint per table. */
  captureDiff(): Promise<StateDiff>;
  /** A role and URL that can read and write this database only (database.expose: true). */
  exposeUrl(): Promise<string>;
  /** Drops the database (off the critical path: callers need not await it). */
  dispose(): Promise<void>;
}

/** A template built once per run; clones are cheap. */
export interface Template {
  readonly name: string;
  /** sha256 of the schema and fixtures it was built from. */
  readonly hash: string;
  /** Tables in the template and their primary keys (null: none; diffed as a multiset). */
  readonly tables: Record<string, string[] | null>;
  /** Each table's columns in table order, to check the tables and columns a suite names. */
  readonly columns: Record<string, string[]>;
  /** A fresh database with the template's contents. */
  clone(label: string): Promise<Sandbox>;
  /**
   * A database of the reserved pool that is ready now (the template's contents, its change log
   * empty), or null when none is; never waits, so an episode that gets one starts at once.
   */
  take(): Sandbox | null;
  /**
   * Keeps `count` databases for the run (made now, in parallel): a disposed clone is then put back to
   * the template's state for the next episode instead of dropped. Best effort; a no-op where clones
   * cannot be put back.
   */
  reserve(count: number): Promise<void>;
  /**
   * The most databases episodes may still take (clone() or take()), an upper bound; unknown until
   * said. A database disposed while the pool already covers that many is put back only when an
   * episode asks for one after all, so no put-back runs for an episode that never comes.
   */
  expectTakes(count: number): void;
  /** Prepares (without running) a statement against the template; returns the error message or null. */
  prepare(sql: string, paramCount?: number): Promise<string | null>;
  /**
   * Says every statement is prepared: the database prepare() used (it holds a connection) is
   * disposed like an episode's, so after reserve() it joins the pool. A later prepare() makes another.
   */
  donePreparing(): void;
}

/** A database engine: where sandboxes live. */
export interface Engine {
  readonly name: EngineName;
  /** Why this engine was chosen, in one short line (the report prints it). */
  readonly reason: string;
  /** The long detail behind the reason (addresses probed, image, where the binaries came from): terminal only. */
  readonly detail?: string;
  /** The run prefix every database this engine creates carries. */
  readonly runPrefix: string;
  buildTemplate(spec: TemplateSpec): Promise<Template>;
  /**
   * Drops every database this run created, and the server when the engine owns it. Idempotent: the
   * first call's options hold. `detach`: databases on a server the engine does not own are dropped
   * by a child process that outlives this one, and close() resolves once it has started.
   */
  close(opts?: { detach?: boolean }): Promise<void>;
}
