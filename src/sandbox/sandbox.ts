// One episode's database: a clone of the template with its own small pool.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { RowChange, StateDiff, TableDiff } from '../model/episode.js';
import {
  flattenChanges,
  foldChanges,
  LOG_WATERMARK,
  type LogRow,
  READ_LOG_OF_TRANSACTION,
  readLogAfter,
} from './capture.js';
import type { TableInfo } from './catalog.js';
import type { Cluster } from './cluster.js';
import { budgetedClient, type ConnectionBudget } from './connections.js';
import { addSums, combineSums, fingerprintOf, LOG_SUMS } from './fingerprint.js';
import { ident, literal } from './names.js';
import { BASELINE, type Baseline, putBack, type ReuseFacts } from './reuse.js';
import { statementTimeout } from './statement-timeout.js';
import type { SuiteRole } from './suite-role.js';
import type { TypeNames } from './type-names.js';
import type { Sandbox, SqlSession } from './types.js';
import { SESSION_OPTIONS, sandboxTypes } from './values.js';

/** What every clone of one template shares. */
export interface TemplateFacts {
  cluster: Cluster;
  /** The unprivileged role that owns the template and its clones; every session of a clone logs in as it. */
  owner: SuiteRole;
  tables: TableInfo[];
  /** User schemas (granted to expose roles). */
  schemas: string[];
  /** The row-hash sum of every table in the template (see fingerprint.ts). */
  sums: Record<string, bigint>;
  typeNames: TypeNames;
  /** What putting a used clone back needs; null when the admin cannot (not a superuser). */
  reuse: ReuseFacts | null;
}

/** What becomes of a disposed sandbox: dropped, or put back for the next episode (template.ts). */
export type Retire = (sandbox: PgSandbox) => Promise<void>;

/**
 * A connection pool for one database with the sandbox value conversions; with a budget, each
 * connection takes one of its slots and idle ones close as the budget says (connections.ts).
 */
export function sandboxPool(url: string, max: number, budget?: ConnectionBudget): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    types: sandboxTypes,
    options: SESSION_OPTIONS,
    ...(budget ? { Client: budgetedClient(budget), idleTimeoutMillis: budget.idleMs } : {}),
  });
  // Idle clients are terminated when the database is dropped; that is expected, not a crash.
  pool.on('error', () => undefined);
  // A checked-out client has no pool listener: when its database is dropped mid-transaction (an
  // interrupted run), the error reaches the pending query; without this it would also crash the process.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** The SqlSession of one pg client or pool. */
export function sessionOf(client: pg.ClientBase | pg.Pool, typeNames: TypeNames): SqlSession {
  return {
    query: async (sql, params) =>
      typeNames.toQueryRows(
        (await client.query(sql, params as unknown[] | undefined)) as pg.QueryResult,
        client,
      ),
  };
}

/** A sandbox on a freshly cloned database. */
export class PgSandbox implements Sandbox {
  readonly url: string;
  private readonly pool: pg.Pool;
  private readonly session: SqlSession;
  private watermark = '0';
  /** Whether this lease ran anything that may have written (see markInitial). */
  private used = false;
  /** The agent's login of this lease (a reused database keeps its role, with a new password). */
  private role: { name: string; url: string } | null = null;
  private disposed: Promise<void> | null = null;
  /** warm()'s connection, while it opens: the first queries wait for it rather than open their own. */
  private warming: Promise<void> | null = null;
  private ended: Promise<void> | null = null;
  /** One promise per connection this lease opened, resolved when it has closed. */
  private readonly closing: Promise<void>[] = [];
  /** The state no episode may change for the database to be reused; null: drop it after use. */
  baseline: Baseline | null = null;
  /** The role made for agents on this database, kept across leases. */
  private roleName: string | null = null;

  constructor(
    readonly name: string,
    private readonly number: number,
    private readonly facts: TemplateFacts,
    private readonly retire: Retire = (s) => s.drop(),
  ) {
    this.url = facts.cluster.url(name, facts.owner);
    this.pool = sandboxPool(this.url, 4, facts.cluster.budget);
    this.pool.on('connect', (client) => {
      this.closing.push(new Promise((resolve) => client.once('end', () => resolve())));
    });
    this.session = sessionOf(this.pool, facts.typeNames);
  }

  /**
   * Opens one connection now, so the first query does not wait for a backend to start, and reads
   * the log once, so that backend has the log's catalog entries cached when the episode starts.
   */
  warm(): Promise<void> {
    this.warming ??= this.pool.query(LOG_WATERMARK).then(() => undefined);
    return this.warming;
  }

  /**
   * Resolves once warm()'s connection is open (or failed). A query that came meanwhile would open a
   * second backend: when a wave's first tool calls wait for databases still being made, each call
   * and each warm-up would take a connection of the budget at once, fill it, and from then on every
   * idle connection of the run would close after its query (connections.ts), so each later tool
   * call would start a backend of its own.
   */
  private async warmed(): Promise<void> {
    await this.warming?.catch(() => undefined);
  }

  /**
   * The same database under a new lease that holds no connection, once this lease's pool has
   * ended: what a pooled database waits as, so that idle databases cost the server no connection.
   */
  async rested(): Promise<PgSandbox> {
    await this.endPool();
    return this.successor();
  }

  /** Ends this lease's pool (once); resolves when its connections are closed. Never rejects. */
  private endPool(): Promise<void> {
    // pg.Pool's end() resolves once its clients are told to end, not once they have.
    this.ended ??= this.pool
      .end()
      .catch(() => undefined)
      .then(async () => {
        await Promise.all(this.closing);
      });
    return this.ended;
  }

  async query(sql: string, params?: unknown[]) {
    this.used = true;
    await this.warmed();
    return this.session.query(sql, params);
  }

  async transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<{ value: T; changes: RowChange[] }> {
    this.used = true;
    await this.warmed();
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      try {
        const value = await fn(sessionOf(client, this.facts.typeNames));
        // The log and the commit in one round trip (one simple-protocol query of two statements):
        // when a wave's tool calls arrive together, their round trips queue for the same cores. A
        // failing COMMIT (a deferred constraint) throws like a failing read and is rolled back below.
        const [log] = (await client.query(`${READ_LOG_OF_TRANSACTION}; COMMIT`)) as unknown as [
          pg.QueryResult<LogRow>,
          pg.QueryResult,
        ];
        return { value, changes: flattenChanges(foldChanges(log.rows, this.facts.tables)) };
      } catch (e) {
        await client.query('ROLLBACK').catch((rollbackError: Error) => {
          broken = rollbackError;
        });
        throw e;
      }
    } finally {
      client.release(broken);
    }
  }

  /**
   * Runs one suite query that must not write: the transaction is READ ONLY and locked so by a first
   * query (a later `SET TRANSACTION READ WRITE` is then refused), and it is always rolled back.
   */
  async readOnly(
    sql: string,
    timeoutMs?: number,
  ): Promise<{ rows: Record<string, unknown>[]; fields: { name: string; type: string }[] }> {
    await this.warmed();
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      // One round trip: the first statement after BEGIN takes the snapshot and locks READ ONLY. The
      // timeout is a whole number the harness computed (never suite text), so it is written in place.
      // Without a timeout the server's own statement_timeout stays in force.
      const bound =
        timeoutMs === undefined
          ? 'SELECT 1'
          : `SELECT set_config('statement_timeout', '${statementTimeout(timeoutMs)}', true)`;
      await client.query(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; ${bound}`);
      const session = sessionOf(client, this.facts.typeNames);
      const result = await session.query(sql);
      return { rows: result.rows, fields: result.fields };
    } finally {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      client.release(broken);
    }
  }

  async markInitial(): Promise<void> {
    // A clone, or a database put back, starts with an empty log: until something may have written,
    // the watermark is known without asking.
    if (!this.used) {
      this.watermark = '0';
      return;
    }
    const r = await this.pool.query<{ id: string }>(LOG_WATERMARK);
    this.watermark = r.rows[0].id;
  }

  async captureDiff(): Promise<StateDiff> {
    const readLog = readLogAfter(this.watermark);
    await this.warmed();
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      // One snapshot for the log and the fingerprints, in one round trip (one simple-protocol query
      // of four statements): a wave's episodes end together, and their round trips queue for the
      // harness's one thread. A statement that fails leaves the transaction aborted: the connection
      // is then discarded (release with the error), not handed to the next query.
      const [, changed, log] = (await client
        .query(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; ${LOG_SUMS}; ${readLog}; COMMIT`)
        .catch((e: Error) => {
          broken = e;
          throw e;
        })) as unknown as [
        pg.QueryResult,
        pg.QueryResult<{ tbl: string; sums: string[] }>,
        pg.QueryResult<LogRow>,
        pg.QueryResult,
      ];
      const sums = { ...this.facts.sums };
      for (const row of changed.rows) sums[row.tbl] = addSums(sums[row.tbl] ?? 0n, combineSums(row.sums));
      const fingerprints: Record<string, string> = {};
      for (const table of this.facts.tables) fingerprints[table.key] = fingerprintOf(sums[table.key]);
      const tables: Record<string, TableDiff> = {};
      for (const diff of foldChanges(log.rows, this.facts.tables)) tables[diff.table] = diff;
      return { tables, fingerprints };
    } finally {
      client.release(broken);
    }
  }

  async exposeUrl(): Promise<string> {
    if (this.role) return this.role.url;
    const { cluster } = this.facts;
    const password = randomBytes(18).toString('base64url');
    if (this.roleName) {
      // A reused database: its role was locked (NOLOGIN, no password) when the last episode ended.
      await cluster.admin.query(
        `${cluster.passwordSetting}ALTER ROLE ${ident(this.roleName)} LOGIN PASSWORD ${literal(password)}`,
      );
    } else {
      const role = `${cluster.runPrefix}_r_${this.number}`;
      // The grants below are the harness's own DDL: the baseline moves past them, but only if nothing
      // before them (scenario state SQL) changed it already.
      if (this.baseline && !sameBaseline(this.baseline, await this.readBaseline())) this.baseline = null;
      await cluster.createRole(role, password, `expose ${this.name}`);
      this.roleName = role;
      await cluster.admin.query(`GRANT CONNECT ON DATABASE ${ident(this.name)} TO ${ident(role)}`);
      const grants = this.facts.schemas.flatMap((s) => [
        `GRANT USAGE ON SCHEMA ${ident(s)} TO ${ident(role)}`,
        `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${ident(s)} TO ${ident(role)}`,
        `GRANT USAGE ON ALL SEQUENCES IN SCHEMA ${ident(s)} TO ${ident(role)}`,
      ]);
      if (grants.length > 0) await this.pool.query(grants.join(';\n'));
      if (this.baseline) this.baseline = await this.readBaseline();
    }
    this.role = { name: this.roleName, url: cluster.url(this.name, { name: this.roleName, password }) };
    return this.role.url;
  }

  /** Reads the state that decides whether the database may be reused (see reuse.ts). */
  async readBaseline(): Promise<Baseline> {
    return (await this.pool.query<Baseline>(BASELINE)).rows[0];
  }

  /**
   * Locks the agent's role and puts the database back to the template's state; null when it is
   * back and verified, else why not (see reuse.ts). Only after dispose().
   */
  async putBack(): Promise<string | null> {
    const { cluster, tables, reuse } = this.facts;
    if (!reuse || !this.baseline) return 'not reusable';
    if (this.roleName) {
      // Settings the agent gave its own role would reach the next agent: they go too.
      await cluster.admin.query(
        `ALTER ROLE ${ident(this.roleName)} NOLOGIN PASSWORD NULL; ALTER ROLE ${ident(this.roleName)} RESET ALL`,
      );
    }
    return putBack({
      cluster,
      database: this.name,
      owner: this.facts.owner,
      tables,
      reuse,
      baseline: this.baseline,
    });
  }

  /**
   * Whether this lease gave an agent a login to the database (exposeUrl()). An earlier lease's login
   * was locked when that lease's database was put back.
   */
  get exposed(): boolean {
    return this.role !== null;
  }

  /** A new sandbox (own pool, own lease) on this database, once it is put back. */
  successor(): PgSandbox {
    const next = new PgSandbox(this.name, this.number, this.facts, this.retire);
    next.baseline = this.baseline;
    next.roleName = this.roleName;
    return next;
  }

  /** Drops the database and its agent role, off the critical path. Never rejects. */
  drop(): Promise<void> {
    void this.endPool();
    return this.facts.cluster.queueDrop(this.name, this.roleName ? [this.roleName] : []);
  }

  dispose(): Promise<void> {
    if (!this.disposed) {
      // Idle connections end now; the drop or the put-back disconnects anything still busy.
      void this.endPool();
      this.disposed = this.retire(this);
    }
    return this.disposed;
  }
}

function sameBaseline(a: Baseline, b: Baseline): boolean {
  return a.ddl === b.ddl && a.database === b.database;
}
