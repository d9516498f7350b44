// The server side of an engine: one admin pool, the run's databases and roles, and a queue that
// drops disposed databases off the critical path.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import pg from 'pg';
import { type ConnectionBudget, readConnectionBudget } from './connections.js';
import { databaseUrl, ident, literal } from './names.js';
import { ownerComment } from './owner.js';

/** How CREATE DATABASE copies a template (PostgreSQL 15 and later; earlier servers always copy files). */
export type CloneStrategy = 'WAL_LOG' | 'FILE_COPY';

const DROP_CONCURRENCY = 4;
const CLOSE_CONCURRENCY = 6;
// Each DROP DATABASE waits for a checkpoint, and a checkpoint writes out every clone not yet
// dropped: when clones come faster than drops, the backlog (databases on the server, queued drops
// in the harness) would grow with the run and slow each checkpoint further. Past this many queued
// or running drops, a new clone waits for one to finish.
export const MAX_DROP_BACKLOG = 16;

/** The admin side of one server for one run. */
export class Cluster {
  private readonly drops = new Set<Promise<void>>();
  private readonly creates = new Set<Promise<unknown>>();
  private readonly closers: (() => Promise<void>)[] = [];
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Clones waiting for the drop backlog to shrink. */
  private readonly waitingForRoom: (() => void)[] = [];
  private counter = 0;
  private closed = false;
  /** close() is about to drop everything of the run at once: queued drops need not run first. */
  private sweeping = false;

  private constructor(
    readonly adminUrl: string,
    readonly runPrefix: string,
    readonly admin: pg.Pool,
    /** server_version_num, e.g. 150020. */
    readonly version: number,
    readonly strategy: CloneStrategy | null,
    /** Whether the admin role is a superuser (otherwise it joins the roles whose databases it creates). */
    readonly superuser: boolean,
    /** The connections episodes and put-backs may hold at once (see connections.ts). */
    readonly budget: ConnectionBudget,
  ) {}

  /** Connects to the server and reads its version. */
  static async connect(adminUrl: string, runPrefix: string, strategy?: CloneStrategy): Promise<Cluster> {
    // Bookkeeping commits need not wait for the disk: a crash loses nothing a sweep cannot redo.
    const admin = new pg.Pool({
      connectionString: adminUrl,
      max: CLOSE_CONCURRENCY,
      options: '-c synchronous_commit=off',
    });
    admin.on('error', () => undefined);
    admin.on('connect', (client) => client.on('error', () => undefined));
    let version: number;
    let superuser: boolean;
    let budget: ConnectionBudget;
    try {
      const r = await admin.query<{ v: string; su: boolean }>(
        'SELECT current_setting($1) AS v, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS su',
        ['server_version_num'],
      );
      version = Number(r.rows[0].v);
      superuser = r.rows[0].su === true;
    } catch (e) {
      await admin.end().catch(() => undefined);
      throw new Error(
        `cannot connect to the database server at ${redact(adminUrl)}: ${(e as Error).message}`,
      );
    }
    try {
      budget = await readConnectionBudget(admin, CLOSE_CONCURRENCY, redact(adminUrl));
    } catch (e) {
      await admin.end().catch(() => undefined);
      throw e;
    }
    // STRATEGY exists from PostgreSQL 15. WAL_LOG is the default on a shared server: FILE_COPY forces
    // a checkpoint per clone (seconds on a busy one). The embedded engine asks for FILE_COPY: its
    // server is the run's own (docs/engines.md has the numbers).
    const chosen = version >= 150000 ? (strategy ?? 'WAL_LOG') : null;
    return new Cluster(adminUrl, runPrefix, admin, version, chosen, superuser, budget);
  }

  /**
   * Said before setting a role's password (PostgreSQL 16 and later): the SCRAM verifier is made
   * with 16 iterations instead of 4096. Each new connection's client repeats them, and a run opens
   * hundreds (a wave of 64 episodes spent a third of a second of the harness's one thread on
   * them). The iterations guard a guessable password against a stolen verifier; every password
   * this harness sets is 18 random bytes, and only a superuser reads verifiers.
   */
  get passwordSetting(): string {
    return this.version >= 160000 ? 'SET scram_iterations = 16;\n' : '';
  }

  /** The next number for a database or role name of this run. */
  next(): number {
    return ++this.counter;
  }

  /** The URL of one of this server's databases, as the admin (or as another role). */
  url(database: string, user?: { name: string; password: string }): string {
    return databaseUrl(this.adminUrl, database, user);
  }

  /**
   * Creates a database (optionally from a template, optionally owned by a role of this run) that
   * only its owner and granted roles may connect to.
   */
  createDatabase(
    name: string,
    opts: { template?: string; label?: string; owner?: string } = {},
  ): Promise<void> {
    this.assertOpen();
    return this.track(async () => {
      if (opts.template) await this.dropRoom();
      let sql = `CREATE DATABASE ${ident(name)}`;
      if (opts.template) {
        sql += ` TEMPLATE ${ident(opts.template)}`;
        if (this.strategy) sql += ` STRATEGY ${this.strategy}`;
      }
      if (opts.owner) sql += ` OWNER ${ident(opts.owner)}`;
      await this.admin.query(sql);
      // One round trip, one transaction (CREATE DATABASE itself cannot run inside one).
      await this.admin.query(
        `COMMENT ON DATABASE ${ident(name)} IS ${literal(ownerComment(opts.label))};
         REVOKE ALL ON DATABASE ${ident(name)} FROM PUBLIC`,
      );
    });
  }

  /** Rewrites the label in a database's comment, in the background. */
  relabel(name: string, label: string): void {
    if (this.closed) return;
    void this.track(() =>
      this.admin.query(`COMMENT ON DATABASE ${ident(name)} IS ${literal(ownerComment(label))}`),
    ).catch(() => undefined);
  }

  /** Runs something close() must wait for before it lists what to drop. */
  private track<T>(fn: () => Promise<T>): Promise<T> {
    const p = fn();
    this.creates.add(p);
    const forget = () => this.creates.delete(p);
    p.then(forget, forget);
    return p;
  }

  /** Registers work to do first when closing (e.g. discarding clones made ahead). */
  onClose(fn: () => Promise<void>): void {
    this.closers.push(fn);
  }

  /** Whether close() has begun. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Creates a login role with a password, no server-wide privilege and no membership in any role.
   * `owner`: the role will own databases the admin creates for it; an admin that is not a superuser
   * must be a member of a role to create a database owned by it, so it joins this one.
   */
  async createRole(
    name: string,
    password: string,
    label?: string,
    opts: { owner?: boolean } = {},
  ): Promise<void> {
    this.assertOpen();
    // One round trip, one transaction: a role never exists without the comment the sweep goes by.
    await this.admin.query(
      `${this.passwordSetting}CREATE ROLE ${ident(name)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD ${literal(password)};
       COMMENT ON ROLE ${ident(name)} IS ${literal(ownerComment(label))}`,
    );
    if (opts.owner && !this.superuser) await this.admin.query(`GRANT ${ident(name)} TO CURRENT_USER`);
  }

  /** Drops a database (disconnecting its sessions) and then the given roles. */
  async dropDatabase(name: string, roles: string[] = []): Promise<void> {
    await dropDatabase(this.admin, this.version, name);
    for (const role of roles) await this.admin.query(`DROP ROLE IF EXISTS ${ident(role)}`);
  }

  /** Queues a drop so the caller need not wait; close() waits for every queued drop. Never rejects. */
  queueDrop(name: string, roles: string[] = []): Promise<void> {
    const run = async () => {
      if (this.running >= DROP_CONCURRENCY) await new Promise<void>((r) => this.waiting.push(r));
      // close()'s sweep drops it with the rest of the run, in parallel, rather than 4 at a time.
      if (this.sweeping) {
        this.waiting.shift()?.();
        return;
      }
      this.running++;
      try {
        await this.dropDatabase(name, roles);
      } catch {
        // close() drops whatever carries the run prefix, so a failed drop is retried there.
      } finally {
        this.running--;
        this.waiting.shift()?.();
      }
    };
    const p = run();
    this.drops.add(p);
    void p.finally(() => {
      this.drops.delete(p);
      // Every waiter checks again: waking one per drop could strand a waiter when drops run out.
      for (const wake of this.waitingForRoom.splice(0)) wake();
    });
    return p;
  }

  /** Queued or running drops (bounded by MAX_DROP_BACKLOG while clones are made). */
  get dropBacklog(): number {
    return this.drops.size;
  }

  /** Resolves once the drop backlog is below its bound. */
  private async dropRoom(): Promise<void> {
    while (this.drops.size >= MAX_DROP_BACKLOG) {
      await new Promise<void>((r) => this.waitingForRoom.push(r));
    }
  }

  /**
   * Waits for queued drops, drops every database and role that carries the run prefix (unless the
   * whole server is about to go: `dropAll: false`), and ends the pool. With `detach`, the drops are
   * handed to a child process that outlives this one (dropRunDetached): nothing the run reports
   * needs them, and on a server whose files reach a disk 64 databases take seconds to drop. Where no
   * child can be started, they are dropped here as without it.
   */
  async close(opts: { dropAll?: boolean; detach?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const sweeping = opts.dropAll !== false;
    if (sweeping) {
      this.sweeping = true;
      // Drops waiting for their turn give it up: the sweep below drops them.
      for (const wake of this.waiting.splice(0)) wake();
    }
    try {
      await Promise.allSettled(this.closers.map((fn) => fn()));
      await Promise.allSettled([...this.creates]);
      await Promise.all([...this.drops]);
      if (sweeping) {
        // No episode holds a connection now: the sweep may use the run's whole budget.
        const wide = { url: this.adminUrl, parallel: this.budget.limit };
        const handedOff =
          opts.detach === true && (await dropRunDetached({ ...wide, prefix: this.runPrefix }));
        if (!handedOff) await dropRun(this.admin, this.version, this.runPrefix, wide);
      }
    } finally {
      await this.admin.end().catch(() => undefined);
    }
  }

  /** The synchronous last resort at process exit: a child process drops the run's databases and roles. */
  closeSync(): void {
    if (this.closed) return;
    this.closed = true;
    dropRunSync({ url: this.adminUrl, prefix: this.runPrefix, parallel: this.budget.limit });
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the engine is closed');
  }
}

/**
 * Drops one database, disconnecting its sessions first. Its owner (the suite's role) may have
 * marked it IS_TEMPLATE, which DROP DATABASE refuses: that mark is undone and the drop tried again.
 */
export async function dropDatabase(admin: pg.Pool | pg.Client, version: number, name: string): Promise<void> {
  try {
    await dropOnce(admin, version, name);
  } catch (e) {
    if (!/cannot drop a template database/.test((e as Error).message)) throw e;
    await admin.query(`ALTER DATABASE ${ident(name)} IS_TEMPLATE false`);
    await dropOnce(admin, version, name);
  }
}

async function dropOnce(admin: pg.Pool | pg.Client, version: number, name: string): Promise<void> {
  if (version >= 130000) {
    await admin.query(`DROP DATABASE IF EXISTS ${ident(name)} WITH (FORCE)`);
    return;
  }
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
  await admin.query(`DROP DATABASE IF EXISTS ${ident(name)}`);
}

/** A LIKE pattern for names that start with the prefix and an underscore. */
export function prefixPattern(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, '\\$&')}\\_%`;
}

/**
 * Drops every database, then every role, whose name starts with the run prefix. Each DROP DATABASE
 * waits for a checkpoint, and drops in flight together share one (64 clones: 5.0 s one at a time,
 * 3.7 s six at a time, 0.27 s all at once): with `parallel`, up to that many short-lived
 * connections to `url` drop at once; a drop that could not get one is tried again on `admin`.
 */
export async function dropRun(
  admin: pg.Pool | pg.Client,
  version: number,
  prefix: string,
  wide?: { url: string; parallel: number },
): Promise<void> {
  const dbs = await admin.query<{ datname: string }>(
    'SELECT datname FROM pg_database WHERE datname LIKE $1',
    [prefixPattern(prefix)],
  );
  const names = dbs.rows.map((r) => r.datname);
  const errors: string[] = [];
  const left = wide && names.length > 1 ? await dropInParallel(names, version, wide) : names;
  const queue = [...left];
  const worker = async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      await dropDatabase(admin, version, name).catch((e: Error) => errors.push(`${name}: ${e.message}`));
    }
  };
  await Promise.all(Array.from({ length: admin instanceof pg.Pool ? CLOSE_CONCURRENCY : 1 }, worker));
  const roles = await admin.query<{ rolname: string }>('SELECT rolname FROM pg_roles WHERE rolname LIKE $1', [
    prefixPattern(prefix),
  ]);
  for (const { rolname } of roles.rows) {
    await admin
      .query(`DROP ROLE IF EXISTS ${ident(rolname)}`)
      .catch((e: Error) => errors.push(`${rolname}: ${e.message}`));
  }
  if (errors.length > 0) throw new Error(`could not drop everything of run ${prefix}: ${errors.join('; ')}`);
}

/**
 * Drops the databases on min(databases, parallel) connections of their own: every connection is
 * opened first, then every drop sent at once. Each drop waits for a checkpoint that starts after
 * it asked, so drops that ask together share one; sent as each connection came up, the later ones
 * asked while the first ones' checkpoint ran, and waited for the next (64 databases of a wave:
 * 0.33 s in all, 0.10 s of it opening, against 0.40 to 0.52 s). Returns those it could not drop
 * (no connection, a drop that failed), for the caller to try again and report.
 */
async function dropInParallel(
  names: string[],
  version: number,
  wide: { url: string; parallel: number },
): Promise<string[]> {
  const clients = Array.from({ length: Math.max(1, Math.min(names.length, wide.parallel)) }, () => {
    const client = new pg.Client({ connectionString: wide.url });
    client.on('error', () => undefined);
    return client;
  });
  const opened = await Promise.allSettled(clients.map((c) => c.connect()));
  const ready = clients.filter((_, i) => opened[i].status === 'fulfilled');
  const queue = [...names];
  const failed: string[] = [];
  try {
    await Promise.all(
      ready.map(async (client) => {
        for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
          await dropDatabase(client, version, name).catch(() => failed.push(name));
        }
      }),
    );
  } finally {
    // Not waited for: each end is a goodbye to a server that has nothing left to do for this run
    // (66 of them took 60 ms of a close that everything after the run waits for).
    for (const c of clients) void c.end().catch(() => undefined);
  }
  // No connection opened: nothing was tried here.
  return [...failed, ...queue];
}

// Drops a run's databases and roles from a child process: at 'exit', when this process's event loop
// no longer turns (spawnSync), or after a run that hands its drops off (close({ detach })), in a
// child that outlives it. Plain CommonJS and pg; the admin URL comes on stdin, never in argv or env.
const DROP_RUN_CHILD = `
const pg = require(process.env.SG_PG);
// Bounded: a server that stops answering must not keep a child alive for ever.
setTimeout(() => process.exit(1), 120000).unref();
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => run(JSON.parse(input)).catch((e) => { console.error(e.message); process.exit(1); }));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function run({ url, prefix, parallel }) {
  const like = prefix.replace(/[\\\\%_]/g, '\\\\$&') + '\\\\_%';
  const open = async () => {
    const c = new pg.Client({ connectionString: url });
    c.on('error', () => undefined);
    await c.connect();
    return c;
  };
  const main = await open();
  try {
    const v = Number((await main.query('SHOW server_version_num')).rows[0].server_version_num);
    // A clone made ahead may still be in CREATE DATABASE on an exiting process's connection: the
    // server finishes it after the client is gone, so it would appear after the listing and keep its
    // owner role alive. Wait (bounded) until no such statement runs.
    const creating = async () => (await main.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query ILIKE 'CREATE DATABASE%' AND position($1 in query) > 0",
      [prefix + '_'],
    )).rows[0].n;
    for (let i = 0; i < 200 && (await creating()) > 0; i++) await sleep(100);
    const names = (await main.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [like])).rows.map((r) => r.datname);
    const dropOnce = async (c, name) => {
      if (v < 130000) await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
      await c.query('DROP DATABASE IF EXISTS ' + c.escapeIdentifier(name) + (v >= 130000 ? ' WITH (FORCE)' : ''));
    };
    const drop = (c, name) => dropOnce(c, name).catch(async (e) => {
      // The suite's role may have marked its database a template, which DROP DATABASE refuses.
      if (!/cannot drop a template database/.test(e.message)) throw e;
      await c.query('ALTER DATABASE ' + c.escapeIdentifier(name) + ' IS_TEMPLATE false');
      await dropOnce(c, name);
    });
    // Each DROP DATABASE waits for a checkpoint and drops in flight together share one: every
    // session is opened first (at most the run's connection budget), then every drop sent at once.
    const opened = await Promise.allSettled(Array.from({ length: Math.min(names.length, parallel) }, open));
    const sessions = opened.filter((o) => o.status === 'fulfilled').map((o) => o.value);
    const queue = [...names];
    const failed = [];
    await Promise.all(sessions.map(async (c) => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) await drop(c, name).catch(() => failed.push(name));
    }));
    for (const c of sessions) void c.end().catch(() => undefined);
    for (const name of [...failed, ...queue]) await drop(main, name).catch(() => undefined);
    for (const { rolname } of (await main.query('SELECT rolname FROM pg_roles WHERE rolname LIKE $1', [like])).rows) {
      await main.query('DROP ROLE IF EXISTS ' + main.escapeIdentifier(rolname)).catch(() => undefined);
    }
  } finally {
    await main.end().catch(() => undefined);
  }
}
`;

/** What the dropping child needs (on its stdin). */
interface DropRunInput {
  url: string;
  prefix: string;
  /** Sessions that drop at once. */
  parallel: number;
}

/** pg's entry point for a child process to require, or null in a bundle without node_modules. */
function pgModulePath(): string | null {
  try {
    return createRequire(import.meta.url).resolve('pg');
  } catch {
    return null;
  }
}

function dropRunSync(input: DropRunInput): void {
  const pgPath = pgModulePath();
  // A bundle without node_modules: sweepLeftovers of the next run removes the rest.
  if (!pgPath) return;
  spawnSync(process.execPath, ['-e', DROP_RUN_CHILD], {
    env: { ...process.env, SG_PG: pgPath },
    input: JSON.stringify(input),
    stdio: ['pipe', 'ignore', 'ignore'],
    timeout: 60_000,
  });
}

/**
 * Starts a child process, in a process group of its own, that drops the run's databases and roles
 * and outlives this process; resolves once it has its input (true), or false when none could be
 * started (no pg to require: a bundle without node_modules), for the caller to drop them itself.
 */
function dropRunDetached(input: DropRunInput): Promise<boolean> {
  const pgPath = pgModulePath();
  if (!pgPath) return Promise.resolve(false);
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, ['-e', DROP_RUN_CHILD], {
        detached: true,
        env: { ...process.env, SG_PG: pgPath },
        stdio: ['pipe', 'ignore', 'ignore'],
      });
    } catch {
      resolve(false);
      return;
    }
    // A child that could not start, or died before it had its input: the caller drops them itself.
    child.on('error', () => resolve(false));
    child.once('spawn', () => {
      const stdin = child.stdin as NonNullable<ChildProcess['stdin']>;
      stdin.on('error', () => resolve(false));
      stdin.end(JSON.stringify(input), () => {
        // Nothing of it keeps this process alive, nor waits for it at exit.
        child.unref();
        resolve(true);
      });
    });
  });
}

/** A URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(an invalid URL)';
  }
}
