// Building the template: schema, fixtures, change capture, fingerprints; then no session may stay
// connected, because CREATE DATABASE ... TEMPLATE refuses a template that someone is using.
// Everything inside the template (and its clones) runs as the template's unprivileged owner role.
import pg from 'pg';
import { contentHash } from '../model/content-hash.js';
import { splitStatements } from '../sql/named-params.js';
import { applySqlFile, insertRows } from './apply.js';
import { captureTriggers, installAuditSchema, revokeTriggerFunctions } from './capture.js';
import { readTables, type TableInfo } from './catalog.js';
import type { Cluster } from './cluster.js';
import { Slots } from './connections.js';
import { definerRevokes, OWN_DEFINER_ROUTINES } from './definers.js';
import { combineSums, TABLE_SUMS } from './fingerprint.js';
import { AUDIT_SCHEMA, ident } from './names.js';
import { DATABASE_BASELINE, installDdlNote, type ReuseFacts, readReuseFacts } from './reuse.js';
import { PgSandbox, sessionOf, type TemplateFacts } from './sandbox.js';
import {
  createLogRole,
  createSuiteRole,
  givePublicSchema,
  refusalNote,
  type SuiteRole,
} from './suite-role.js';
import { TypeNames } from './type-names.js';
import type { Sandbox, Template, TemplateSpec } from './types.js';
import { SESSION_OPTIONS, sandboxTypes } from './values.js';

/** The content hash of a template spec (file names, SQL texts and rows): the pin's template hash. */
export function templateHash(spec: TemplateSpec): string {
  return contentHash(spec);
}

const USER_SCHEMAS = `SELECT nspname FROM pg_namespace
 WHERE nspname NOT IN ('pg_catalog', 'information_schema', $1) AND nspname NOT LIKE 'pg\\_%' ORDER BY nspname`;

/** Builds a template database from a spec; the database is dropped again when anything fails. */
export async function buildTemplate(
  cluster: Cluster,
  spec: TemplateSpec,
  clonesAhead = 0,
): Promise<Template> {
  const n = cluster.next();
  const name = `${cluster.runPrefix}_tpl_${n}`;
  const owner = await createSuiteRole(cluster, `owner of ${name}`);
  let log: SuiteRole | null = null;
  // Logged in as the owner role: suite SQL cannot step back up to the admin (SET ROLE could be RESET).
  const client = new pg.Client({
    connectionString: cluster.url(name, owner),
    types: sandboxTypes,
    options: SESSION_OPTIONS,
  });
  client.on('error', () => undefined);
  try {
    await cluster.createDatabase(name, { label: 'template', owner: owner.name });
    await givePublicSchema(cluster, name, owner);
    await client.connect();
    const typeNames = new TypeNames();
    const session = sessionOf(client, typeNames);
    for (const file of spec.schema) await applySqlFile(session, file.file, file.sql);
    for (const fixture of spec.fixtures) {
      if ('sql' in fixture) {
        await applySqlFile(session, fixture.file, fixture.sql);
        continue;
      }
      const known = new Set((await readTables(client)).map((t) => t.key));
      await client.query('BEGIN');
      try {
        for (const [table, rows] of Object.entries(fixture.rows)) {
          if (!known.has(table)) {
            throw new Error(
              `${fixture.file}: unknown table ${JSON.stringify(table)} (tables: ${[...known].join(', ') || 'none'})`,
            );
          }
          await insertRows(session, table, rows, fixture.file);
        }
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw e;
      }
    }
    log = await createLogRole(cluster, `change log of ${name}`);
    const facts = await installCapture(client, cluster, name, typeNames, owner, log);
    // Clones then start with frozen, analysed tables: no hint-bit writes on first read, good plans.
    await client.query('VACUUM (FREEZE, ANALYZE)');
    await client.end();
    await cluster.admin.query(`ALTER DATABASE ${ident(name)} WITH ALLOW_CONNECTIONS false`);
    await cluster.admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [
      name,
    ]);
    return new PgTemplate(name, templateHash(spec), facts, clonesAhead);
  } catch (e) {
    await client.end().catch(() => undefined);
    void cluster.queueDrop(name, log ? [owner.name, log.name] : [owner.name]);
    throw e;
  }
}

/** Runs SQL as the admin inside one database (a transaction of its own), then `then` on the same session. */
async function asAdmin<T = void>(
  cluster: Cluster,
  database: string,
  sql: string,
  then?: (admin: pg.Client) => Promise<T>,
): Promise<T | undefined> {
  const admin = new pg.Client({ connectionString: cluster.url(database), options: SESSION_OPTIONS });
  admin.on('error', () => undefined);
  await admin.connect();
  try {
    await admin.query(`BEGIN;\n${sql};\nCOMMIT`);
    return then ? await then(admin) : undefined;
  } finally {
    await admin.end().catch(() => undefined);
  }
}

async function installCapture(
  client: pg.Client,
  cluster: Cluster,
  database: string,
  typeNames: TypeNames,
  owner: SuiteRole,
  log: SuiteRole,
): Promise<TemplateFacts> {
  const schemas = (await client.query<{ nspname: string }>(USER_SCHEMAS, [AUDIT_SCHEMA])).rows.map(
    (r) => r.nspname,
  );
  const tables = await readTables(client);
  // The log role reads a table only when a TRUNCATE logs the rows it removes.
  const L = ident(log.name);
  const reads = [
    ...schemas.map((s) => `GRANT USAGE ON SCHEMA ${ident(s)} TO ${L}`),
    ...tables.map((t) => `GRANT SELECT ON ${t.sql} TO ${L}`),
  ];
  if (reads.length > 0) await client.query(['BEGIN', ...reads, 'COMMIT'].join(';\n'));
  // The log is the admin's to create: the suite role must not own it (see capture.ts).
  await asAdmin(cluster, database, installAuditSchema(log.name, owner.name));
  // Roles made for agents may use the schemas but never create objects in them (owning nothing).
  const revokes = schemas.map((s) => `REVOKE CREATE ON SCHEMA ${ident(s)} FROM PUBLIC`);
  // Nor may they call the suite's SECURITY DEFINER routines, which would run as the suite role
  // (reading the change log, changing tables' definitions); twin SQL calls them as their owner.
  const definers = await client.query<{ routine: string }>(OWN_DEFINER_ROUTINES);
  revokes.push(...definerRevokes(definers.rows));
  await client.query(['BEGIN', ...revokes, ...tables.map(captureTriggers), 'COMMIT'].join(';\n'));
  await asAdmin(cluster, database, revokeTriggerFunctions(log.name, owner.name));
  // Used clones can be put back instead of dropped only by a superuser admin (see reuse.ts). The
  // DDL note comes last: nothing the build did counts, everything after it does.
  let reuse: ReuseFacts | null = null;
  if (cluster.superuser) {
    reuse =
      (await asAdmin(cluster, database, installDdlNote(log.name, owner.name), (admin) =>
        readReuseFacts(admin, tables, cluster.version),
      )) ?? null;
  }
  const sums: Record<string, bigint> = {};
  for (const t of tables) {
    sums[t.key] = combineSums((await client.query<{ sums: string[] }>(TABLE_SUMS, [t.sql])).rows[0].sums);
  }
  await typeNames.load(client);
  return { cluster, owner, tables, schemas, sums, typeNames, reuse };
}

/**
 * A built template. Clones are cheap, and cheaper still when made ahead: the template keeps a
 * few ready (created and connected) and hands one out at once, making a replacement behind it.
 * Once a run reserves a pool (reserve()), a disposed clone is put back to the template's state
 * (reuse.ts) and handed to the next episode instead of being dropped; one that cannot be put back
 * is dropped and replaced by a new clone.
 */
class PgTemplate implements Template {
  readonly tables: Record<string, string[] | null>;
  readonly columns: Record<string, string[]>;
  private scratch: Promise<Sandbox> | null = null;
  private readonly stock: Promise<PgSandbox>[] = [];
  /** Put back (or new) and connected, waiting for an episode. */
  private readonly idle: PgSandbox[] = [];
  private readonly putting = new Set<Promise<void>>();
  /** Disposed, not yet put back: no episode still to start needed them (expectTakes()). */
  private readonly deferred: PgSandbox[] = [];
  /** The most databases episodes may still take (expectTakes()). */
  private takesLeft = Number.POSITIVE_INFINITY;
  private readonly waiters: (() => void)[] = [];
  private pooled = false;
  /** Databases reserve() is still making (or has yet to start): clone() claims them in turn. */
  private coming = 0;
  /** Episodes waiting for a database of the reserve, first come, first served. */
  private readonly claims: ((s: PgSandbox | null) => void)[] = [];
  /**
   * Put-backs running at once: each holds two connections in turn (admin, then owner), so at most
   * half the budget's connections may be held by put-backs waiting for their second one.
   */
  private readonly putSlots: Slots;
  /** What the pool did: databases put back, and re-cloned (with why). */
  readonly poolStats = { putBack: 0, recloned: 0, reasons: [] as string[] };

  constructor(
    readonly name: string,
    readonly hash: string,
    private readonly facts: TemplateFacts,
    private readonly ahead: number,
  ) {
    this.tables = Object.fromEntries(facts.tables.map((t: TableInfo) => [t.key, t.primaryKey]));
    this.columns = Object.fromEntries(
      facts.tables.map((t: TableInfo) => [t.key, t.columns.map((c) => c.name)]),
    );
    this.putSlots = new Slots(
      Math.max(1, Math.min(PUT_BACKS_AT_ONCE, Math.floor(facts.cluster.budget.limit / 2))),
    );
    facts.cluster.onClose(async () => {
      const unused = this.stock.splice(0);
      await Promise.allSettled(unused.map(async (p) => (await p).dispose()));
      // Put-backs in flight end first (the cluster is closed: what they hand back is dropped).
      while (this.putting.size > 0) await Promise.allSettled([...this.putting]);
      // drop() ends each lease's pool; while the cluster sweeps, its queued drop gives way to the
      // sweep, which drops them all at once (dropRun), else it drops them here.
      await Promise.allSettled([...this.idle.splice(0), ...this.deferred.splice(0)].map((s) => s.drop()));
    });
    this.refill();
  }

  /**
   * A database put back by an earlier episode, a clone made ahead, or a new one. A clone made ahead
   * that failed is retried once, now (a bounded retry: a lasting cause fails this call with the
   * server's message, and the next call tries again).
   */
  async clone(label: string): Promise<Sandbox> {
    for (;;) {
      const reused = this.take();
      if (reused) return reused;
      // The reserve is still making databases: the next one nobody claimed is this episode's.
      if (this.coming > this.claims.length) {
        const reserved = await this.claimComing();
        if (reserved) {
          if (!this.facts.cluster.budget.scarce) void reserved.warm().catch(() => undefined);
          return reserved;
        }
        continue;
      }
      // More episodes than expectTakes() said: a deferred put-back is due now.
      const due = this.deferred.pop();
      if (due) void this.putBackNow(due);
      // A put-back takes milliseconds, a new clone a CREATE DATABASE: wait for the former.
      if (!this.pooled || this.stock.length > 0 || this.putting.size === 0) break;
      await new Promise<void>((r) => this.waiters.push(r));
    }
    const ready = this.stock.shift();
    if (!this.pooled) this.refill();
    if (ready) {
      try {
        const sandbox = await ready;
        this.facts.cluster.relabel(sandbox.name, label);
        return sandbox;
      } catch {
        // Make this one now, so the error (if any) is this call's.
      }
    }
    const made = await this.make(label);
    return made;
  }

  /**
   * A pooled database ready now (put back, its log empty), or null; never waits. It holds no
   * connection while idle: one opens now in the background (unless connections are scarce), so the
   * agent's first call finds it ready.
   */
  take(): Sandbox | null {
    // A pooled database keeps its comment ('pool'): a relabel per episode is a catalog write each.
    const s = this.idle.pop();
    if (!s) return null;
    if (!this.facts.cluster.budget.scarce) void s.warm().catch(() => undefined);
    return s;
  }

  expectTakes(count: number): void {
    this.takesLeft = count;
  }

  /**
   * Keeps `count` databases for the run, made now, RESERVE_PARALLEL at a time: from here on a
   * disposed clone is put back for the next episode rather than dropped. The run need not wait:
   * an episode asking before the pool is made takes the next database being made (clone()), in
   * the order they asked. Does nothing when the admin cannot put clones back (not a superuser).
   * Best effort: a database that cannot be made now is made on demand later. Resolves when every
   * database of the reserve is made or given up; never rejects.
   */
  async reserve(count: number): Promise<void> {
    if (!this.facts.reuse || this.facts.cluster.isClosed) return;
    this.pooled = true;
    // Half the pool runs at once (the pipeline keeps as many spare), and each put-back holds two.
    this.facts.cluster.budget.expect(Math.ceil(count / 2) + 2 * this.putSlots.limit);
    // Clones made ahead join the pool: clone() takes them only when no put-back is in flight, so
    // left in stock they would count as reserved while the episodes of a wave wait for put-backs.
    const ahead = this.stock.splice(0);
    let need = count - ahead.length;
    this.coming += ahead.length + Math.max(need, 0);
    const arrivals = ahead.map(async (p) => this.arrive(await p.then((s) => s.rested()).catch(() => null)));
    const worker = async () => {
      while (need > 0 && !this.facts.cluster.isClosed) {
        need--;
        const made = await this.make('pool')
          .then((s) => s.rested())
          .catch(() => null);
        this.arrive(made);
        if (!made) break;
      }
    };
    await Promise.all([
      ...arrivals,
      ...Array.from({ length: Math.min(RESERVE_PARALLEL, Math.max(need, 0)) }, worker),
    ]);
    // What was not made (the run closed, a make failed) is not coming: its claims make their own.
    this.coming = 0;
    for (const claim of this.claims.splice(0)) claim(null);
  }

  /**
   * A database of the reserve is made (or failed: null): it goes to the episode that asked first
   * for one still being made, else it joins the idle pool.
   */
  private arrive(s: PgSandbox | null): void {
    this.coming = Math.max(0, this.coming - 1);
    if (s && this.facts.cluster.isClosed) {
      void s.drop();
      s = null;
    }
    const claim = this.claims.shift();
    if (claim) {
      claim(s);
      return;
    }
    if (!s) return;
    this.idle.push(s);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Waits for the next database of the reserve that no other episode claimed; null if it failed. */
  private claimComing(): Promise<PgSandbox | null> {
    return new Promise((resolve) => this.claims.push(resolve));
  }

  async prepare(sql: string, paramCount = 0): Promise<string | null> {
    // One scratch clone per template answers every prepare: nothing ever connects to the template.
    this.scratch ??= this.clone('prepare');
    return prepareStatement(await this.scratch, sql, paramCount);
  }

  donePreparing(): void {
    const scratch = this.scratch;
    this.scratch = null;
    // Left open, its connection would hold a slot of the budget for the whole run, and keep the
    // process alive until its database is dropped.
    void scratch?.then((s) => s.dispose()).catch(() => undefined);
  }

  private async make(label: string): Promise<PgSandbox> {
    const { cluster } = this.facts;
    const n = cluster.next();
    const name = `${cluster.runPrefix}_e_${n}`;
    try {
      await cluster.createDatabase(name, { template: this.name, label, owner: this.facts.owner.name });
    } catch (e) {
      // CREATE DATABASE may have succeeded before its comment failed.
      if (!cluster.isClosed) void cluster.queueDrop(name);
      throw new Error(
        `could not create the episode's database (a clone of ${this.name}): ${(e as Error).message}`,
      );
    }
    const sandbox = new PgSandbox(name, n, this.facts, (s) => this.retire(s));
    const { reuse } = this.facts;
    if (reuse) {
      try {
        // Read from the admin's session: a pooled database then holds no connection until claimed.
        const row = await cluster.admin.query<{ database: string | null }>(DATABASE_BASELINE, [name]);
        const database = row.rows[0]?.database;
        if (!database) throw new Error('it is not in pg_database');
        sandbox.baseline = { ddl: reuse.ddl, database };
      } catch (e) {
        void sandbox.drop();
        throw new Error(
          `could not read the baseline of the episode's database ${name}: ${(e as Error).message}`,
        );
      }
    }
    return sandbox;
  }

  /**
   * What a disposed clone becomes: dropped, or (pooled) put back and idle again, or, when the idle
   * pool and the put-backs in flight already cover every episode still to start, left as it is until
   * one is needed after all (clone()) or the run ends. A put-back nobody takes is CPU taken from the
   * episodes still running: at the end of every run, and in a run of one wave, all of them. A
   * database an exposed agent logged in to is put back at once, so its login ends with its episode.
   * Never rejects.
   */
  private retire(s: PgSandbox): Promise<void> {
    if (!this.pooled || this.facts.cluster.isClosed) return s.drop();
    // Databases the reserve is still making, and no started episode claimed, are for later ones.
    const unclaimed = Math.max(0, this.coming - this.claims.length);
    if (!s.exposed && this.idle.length + this.putting.size + unclaimed >= this.takesLeft) {
      return s.rested().then(
        (r) => {
          if (this.facts.cluster.isClosed) void r.drop();
          else this.deferred.push(r);
        },
        () => void s.drop(),
      );
    }
    return this.putBackNow(s);
  }

  /** Puts `s` back (or replaces it by a new clone) and makes it idle; wakes clone()'s waiters. */
  private putBackNow(s: PgSandbox): Promise<void> {
    const work = (async () => {
      let next: PgSandbox | null = null;
      await this.putSlots.acquire();
      try {
        const why = await s.putBack();
        if (why === null) {
          // Its pool ended at dispose() and the put-back ended its sessions: the new lease holds none.
          next = s.successor();
          this.poolStats.putBack++;
        } else {
          this.poolStats.recloned++;
          if (this.poolStats.reasons.length < 100) this.poolStats.reasons.push(why);
          void s.drop();
          next = await (await this.make('pool')).rested();
        }
      } catch {
        void s.drop();
        if (next) void next.drop();
        return;
      } finally {
        this.putSlots.release();
      }
      if (this.facts.cluster.isClosed) void next.drop();
      else this.idle.push(next);
    })();
    this.putting.add(work);
    void work.finally(() => {
      this.putting.delete(work);
      // Every waiter looks again: one may find a database, the rest wait or make their own.
      for (const wake of this.waiters.splice(0)) wake();
    });
    return work;
  }

  private refill(): void {
    while (this.stock.length < this.ahead && !this.facts.cluster.isClosed) {
      const made = this.make('ahead').then(async (s) => {
        try {
          await s.warm();
        } catch (e) {
          // A clone nobody will get must not wait for close() to be dropped.
          void s.drop();
          throw e;
        }
        return s;
      });
      made.catch(() => undefined);
      this.stock.push(made);
    }
  }
}

/** Put-backs at most at once (2 cores: more only interleave the same CPU work). */
const PUT_BACKS_AT_ONCE = 8;

/** Databases a reserve() makes at once (each CREATE DATABASE copies the template's files). */
const RESERVE_PARALLEL = 4;

const PREPARED = 'stategate_check';

/**
 * Prepares one statement without running it; the server's message (with line and column) or null.
 * PREPARE checks names and types only: EXPLAIN of a generic plan also checks the privileges the
 * statement needs (a function the suite role may not call), still without running it.
 */
export async function prepareStatement(
  sandbox: Sandbox,
  sql: string,
  paramCount: number,
): Promise<string | null> {
  const count = splitStatements(sql).length;
  if (count !== 1) return count === 0 ? 'no statement to prepare' : `expected one statement, found ${count}`;
  const types = paramCount > 0 ? `(${Array.from({ length: paramCount }, () => 'unknown').join(', ')})` : '';
  const prefix = `PREPARE ${PREPARED}${types} AS `;
  const body = sql.trim().replace(/;\s*$/, '');
  const { value } = await sandbox.transaction(async (tx) => {
    // Prepared statements belong to the connection, so PREPARE and DEALLOCATE share this one.
    // An empty parameter list sends the extended protocol, which refuses a second statement.
    await tx.query('SAVEPOINT stategate_prepare', []);
    try {
      await tx.query(prefix + body, []);
    } catch (e) {
      await tx.query('ROLLBACK TO SAVEPOINT stategate_prepare', []);
      const err = e as { message: string; position?: string; code?: string };
      if (!err.position) return err.message + refusalNote(err);
      const at = Math.max(Number(err.position) - 1 - prefix.length, 0);
      const before = body.slice(0, at);
      return `${err.message} (line ${before.split('\n').length}, column ${at - before.lastIndexOf('\n')})${refusalNote(err)}`;
    }
    // A generic plan keeps every parameter a parameter (NULLs would fold calls away unchecked).
    // The harness's own text, so one round trip of several statements is fine here.
    const nulls = paramCount > 0 ? `(${Array.from({ length: paramCount }, () => 'NULL').join(', ')})` : '';
    try {
      await tx.query(`SET LOCAL plan_cache_mode = force_generic_plan; EXPLAIN EXECUTE ${PREPARED}${nulls}`);
      return null;
    } catch (e) {
      // Only a missing privilege counts here; anything else EXPLAIN says, running will say better.
      const err = e as { message: string; code?: string };
      return err.code === '42501' ? err.message + refusalNote(err) : null;
    } finally {
      await tx.query(`ROLLBACK TO SAVEPOINT stategate_prepare; DEALLOCATE ${PREPARED}`);
    }
  });
  return value;
}
