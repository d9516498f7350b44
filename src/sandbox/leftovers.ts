// Leftovers of earlier runs: databases and roles whose run prefix belongs to a process that is gone.
import { hostname } from 'node:os';
import pg from 'pg';
import { dropDatabase, redact } from './cluster.js';
import { ident } from './names.js';
import { type Owner, ownerGone, parseOwner } from './owner.js';

/** What sweepLeftovers removed. */
export interface SweepResult {
  databases: string[];
  roles: string[];
  /** What could not be dropped, with the server's reason (the sweep goes on past it). */
  failed: string[];
}

const NAME = '^sg_[0-9a-f]{8}_';

/**
 * Drops databases and roles of earlier runs. A run prefix is swept when the owner its comments
 * name ran on this host and is gone, or ran on another host (which cannot be checked from here)
 * and the run is older than `olderThanMs` (default one day). Objects of a prefix without any
 * owner comment are left alone: nothing says whose they are.
 */
export async function sweepLeftovers(
  adminUrl: string,
  opts: { olderThanMs?: number } = {},
): Promise<SweepResult> {
  const olderThanMs = opts.olderThanMs ?? 24 * 3600 * 1000;
  const client = new pg.Client({ connectionString: adminUrl });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (e) {
    throw new Error(`cannot connect to ${redact(adminUrl)}: ${(e as Error).message}`);
  }
  try {
    const version = Number((await client.query('SHOW server_version_num')).rows[0].server_version_num);
    const found = await client.query<{ kind: 'database' | 'role'; name: string; comment: string | null }>(
      `SELECT 'database' AS kind, datname AS name, shobj_description(oid, 'pg_database') AS comment
         FROM pg_database WHERE datname ~ $1
       UNION ALL
       SELECT 'role', rolname, shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname ~ $1`,
      [NAME],
    );
    const owners = new Map<string, Owner>();
    for (const row of found.rows) {
      const owner = parseOwner(row.comment);
      if (owner) owners.set(row.name.slice(0, 11), owner);
    }
    const stale = (prefix: string): boolean => {
      const owner = owners.get(prefix);
      if (!owner) return false;
      if (owner.host === hostname()) return ownerGone(owner);
      return Date.now() - Date.parse(owner.created) > olderThanMs;
    };
    const result: SweepResult = { databases: [], roles: [], failed: [] };
    const attempt = async (name: string, drop: () => Promise<unknown>, done: string[]) => {
      try {
        await drop();
        done.push(name);
      } catch (e) {
        result.failed.push(`${name}: ${(e as Error).message}`);
      }
    };
    // Databases first: a role cannot be dropped while a database still grants it CONNECT.
    for (const row of found.rows.filter((r) => r.kind === 'database' && stale(r.name.slice(0, 11)))) {
      await attempt(row.name, () => dropDatabase(client, version, row.name), result.databases);
    }
    for (const row of found.rows.filter((r) => r.kind === 'role' && stale(r.name.slice(0, 11)))) {
      await attempt(row.name, () => client.query(`DROP ROLE IF EXISTS ${ident(row.name)}`), result.roles);
    }
    return result;
  } finally {
    await client.end().catch(() => undefined);
  }
}
