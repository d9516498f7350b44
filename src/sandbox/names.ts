// Names of everything an engine creates. Every database and role starts with the run prefix, so
// a later run can tell its own leftovers from anything else on a shared server.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** `sg_` and 8 hex digits: the prefix of one run's databases and roles. */
export const RUN_PREFIX_PATTERN = /^sg_[0-9a-f]{8}$/;

/** The schema that holds the change log and the capture trigger function; never shown to agents. */
export const AUDIT_SCHEMA = 'stategate';

/** A fresh run prefix, e.g. `sg_1f3a9c07`. */
export function newRunPrefix(): string {
  return `sg_${randomBytes(4).toString('hex')}`;
}

/** Checks a caller-provided run prefix. */
export function assertRunPrefix(prefix: string): void {
  if (!RUN_PREFIX_PATTERN.test(prefix)) {
    throw new Error(
      `run prefix ${JSON.stringify(prefix)} must look like sg_ and 8 hex digits, e.g. sg_1f3a9c07`,
    );
  }
}

/** Quotes an SQL identifier. */
export function ident(name: string): string {
  return pg.escapeIdentifier(name);
}

/** Quotes an SQL string literal (only for utility statements, which take no bound parameters). */
export function literal(value: string): string {
  return pg.escapeLiteral(value);
}

/** A table as the project names it: `orders` in the public schema, `billing.invoices` elsewhere. */
export function tableKey(schema: string, name: string): string {
  return schema === 'public' ? name : `${schema}.${name}`;
}

/** The quoted, schema-qualified name of a table. */
export function qualified(schema: string, name: string): string {
  return `${ident(schema)}.${ident(name)}`;
}

/** The URL of another database (and optionally another user) on the same server as `url`. */
export function databaseUrl(
  url: string,
  database: string,
  user?: { name: string; password: string },
): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  if (user) {
    u.username = encodeURIComponent(user.name);
    u.password = encodeURIComponent(user.password);
  }
  return u.toString();
}
