// The role suite SQL runs as: one per template, named with the run prefix, with a random password
// and no server-wide privilege. It owns the template and every clone of it, so schema, fixtures,
// scenario state, twins and expectation queries can do anything inside their own database and
// nothing outside it: no server programs or files, no server settings, no roles, no untrusted
// extensions. The admin connection only creates and drops databases and roles.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Cluster } from './cluster.js';
import { ident } from './names.js';

/** A role of this run that owns one template and its clones. */
export interface SuiteRole {
  name: string;
  password: string;
}

/** Creates the owner role of one template (dropped with the run: its name carries the prefix). */
export async function createSuiteRole(cluster: Cluster, label: string): Promise<SuiteRole> {
  const name = `${cluster.runPrefix}_o_${cluster.next()}`;
  const password = randomBytes(18).toString('base64url');
  try {
    await cluster.createRole(name, password, label, { owner: true });
  } catch (e) {
    throw new Error(
      `could not create the role suite SQL runs as (the admin role of the database URL needs CREATEROLE as well as CREATEDB): ${(e as Error).message}`,
    );
  }
  return { name, password };
}

/**
 * Creates the role that owns a template's change log (and so every clone's): it never logs in and
 * owns nothing else, so the role suite SQL runs as cannot change or delete what the log recorded.
 */
export async function createLogRole(cluster: Cluster, label: string): Promise<SuiteRole> {
  const name = `${cluster.runPrefix}_l_${cluster.next()}`;
  const password = randomBytes(18).toString('base64url');
  // A member of it, the admin can create the log as it (SET ROLE) without being a superuser.
  await cluster.createRole(name, password, label, { owner: true });
  return { name, password };
}

/**
 * Before PostgreSQL 15 the public schema of a new database belongs to the bootstrap superuser;
 * hand it to the suite role (before any suite SQL runs) so it can revoke CREATE from agents' roles.
 * From 15 on it belongs to pg_database_owner, which the owner of the database already is.
 */
export async function givePublicSchema(cluster: Cluster, database: string, role: SuiteRole): Promise<void> {
  if (cluster.version >= 150000 || !cluster.superuser) return;
  const client = new pg.Client({ connectionString: cluster.url(database) });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const has = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', ['public']);
    if (has.rowCount) await client.query(`ALTER SCHEMA public OWNER TO ${ident(role.name)}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Why a statement of the suite was refused a privilege, appended to the server's message. */
export const UNPRIVILEGED =
  'suite SQL runs as an unprivileged role: it owns its database, and cannot run programs or read or write files on the server, change server settings, create roles or install untrusted extensions (see docs/engines.md)';

/** What to append to a message about a server error: why, when it is a missing privilege (SQLSTATE 42501). */
export function refusalNote(err: { code?: string }): string {
  return err.code === '42501' ? ` — ${UNPRIVILEGED}` : '';
}
