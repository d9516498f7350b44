// Building the template: schema, fixtures, change capture, fingerprints; then no session may stay
// connected, because CREATE DATABASE ... TEMPLATE refuses a template that someone is using.
// Everything inside the template (and its clones) runs as the template's unprivileged owner role.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { splitStatements } from '../sql/named-params.js';
import { applySqlFile, insertRows } from './apply.js';
import { captureTriggers, installAuditSchema, revokeTriggerFunctions } from './capture.js';
import { readTables, type TableInfo } from './catalog.js';
import type { Cluster } from './cluster.js';
import { definerRevokes, OWN_DEFINER_ROUTINES } from './definers.js';
import { combineSums, TABLE_SUMS } from './fingerprint.js';
import { AUDIT_SCHEMA, ident } from './names.js';
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

/** sha256 of a template spec: file names, SQL texts and rows, in order. */
export function templateHash(spec: TemplateSpec): string {
  return createHash('sha256')
    .update(JSON.stringify(spec, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)))
    .digest('hex');
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

/** Runs SQL as the admin inside one database (a transaction of its own). */
async function asAdmin(cluster: Cluster, database: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: cluster.url(database), options: SESSION_OPTIONS });
  admin.on('error', () => undefined);
  await admin.connect();
  try {
    await admin.query(`BEGIN;\n${sql};\nCOMMIT`);
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
  const sums: Record<string, bigint> = {};
  for (const t of tables) {
    sums[t.key] = combineSums((await client.query<{ sums: string[] }>(TABLE_SUMS, [t.sql])).rows[0].sums);
  }
  await typeNames.load(client);
  return { cluster, owner, tables, schemas, sums, typeNames };
}

/**
 * A built template. Clones are cheap, and cheaper still when made ahead: the template keeps a
 * few ready (created and connected) and hands one out at once, making a replacement behind it.
 */
class PgTemplate implements Template {
  readonly tables: Record<string, string[] | null>;
  private scratch: Promise<Sandbox> | null = null;
  private readonly stock: Promise<PgSandbox>[] = [];

  constructor(
    readonly name: string,
    readonly hash: string,
    private readonly facts: TemplateFacts,
    private readonly ahead: number,
  ) {
    this.tables = Object.fromEntries(facts.tables.map((t: TableInfo) => [t.key, t.primaryKey]));
    facts.cluster.onClose(async () => {
      const unused = this.stock.splice(0);
      await Promise.allSettled(unused.map(async (p) => (await p).dispose()));
    });
    this.refill();
  }

  /**
   * A clone made ahead, or a new one. A clone made ahead that failed is retried once, now (a bounded
   * retry: a lasting cause fails this call with the server's message, and the next call tries again).
   */
  async clone(label: string): Promise<Sandbox> {
    const ready = this.stock.shift();
    this.refill();
    if (ready) {
      try {
        const sandbox = await ready;
        this.facts.cluster.relabel(sandbox.name, label);
        return sandbox;
      } catch {
        // Make this one now, so the error (if any) is this call's.
      }
    }
    return this.make(label);
  }

  async prepare(sql: string, paramCount = 0): Promise<string | null> {
    // One scratch clone per template answers every prepare: nothing ever connects to the template.
    this.scratch ??= this.clone('prepare');
    return prepareStatement(await this.scratch, sql, paramCount);
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
    return new PgSandbox(name, n, this.facts);
  }

  private refill(): void {
    while (this.stock.length < this.ahead && !this.facts.cluster.isClosed) {
      const made = this.make('ahead').then(async (s) => {
        try {
          await s.warm();
        } catch (e) {
          // A clone nobody will get must not wait for close() to be dropped.
          void s.dispose();
          throw e;
        }
        return s;
      });
      made.catch(() => undefined);
      this.stock.push(made);
    }
  }
}

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
