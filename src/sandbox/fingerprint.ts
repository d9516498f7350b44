// Table fingerprints without scanning tables. A fingerprint is an additive multiset hash: the sum,
// modulo 2^256, of sha256(row image) over the rows, where the row image is to_jsonb(row)::text
// rendered under fixed settings. A sum does not depend on row order and counts duplicates, and it
// can be updated from the change log alone: the template's sum per table is computed once, and an
// episode's is that plus sha256 of every row its log inserted, minus every row it removed. The
// reported value is sha256 of the 256-bit sum, so it looks like any other content hash.
import { createHash } from 'node:crypto';
import { AUDIT_SCHEMA, ident } from './names.js';

const A = ident(AUDIT_SCHEMA);
const MODULUS = 1n << 256n;

/**
 * The settings row images are rendered under, whatever the writing session set: the log, the
 * diff and the fingerprints read the same text for the same content.
 */
export const CANONICAL_SETTINGS = `SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
SET IntervalStyle = 'postgres' SET extra_float_digits = 1 SET bytea_output = 'hex'`;

// sha256 cut into eight unsigned 32-bit words, each summed (a numeric sum cannot overflow).
function chunkSums(hash: string, sign = ''): string {
  return Array.from(
    { length: 8 },
    (_, k) =>
      `coalesce(sum(${sign}('x' || encode(substring(${hash} from ${4 * k + 1} for 4), 'hex'))::bit(32)::bigint), 0)`,
  ).join(', ');
}

/** A function (installed with the audit schema) that sums the row hashes of one table. */
export const TABLE_SUMS_FUNCTION = `
CREATE FUNCTION ${A}.table_sums(rel regclass) RETURNS numeric[] LANGUAGE plpgsql
${CANONICAL_SETTINGS} AS $fn$
DECLARE sums numeric[];
BEGIN
  EXECUTE format('SELECT ARRAY[${chunkSums('h').replace(/'/g, "''")}]
                    FROM (SELECT sha256(convert_to(to_jsonb(t)::text, ''UTF8'')) AS h FROM %s AS t) AS rows', rel)
     INTO sums;
  RETURN sums;
END $fn$;`;

/** Sums every table's row hashes (template build). */
export const TABLE_SUMS = `SELECT ${A}.table_sums($1::regclass) AS sums`;

/** Sums the row hashes the log added (+) and removed (-), per table, since the template. */
export const LOG_SUMS = `
SELECT tbl, ARRAY[${chunkSums('h', 'sign * ')}] AS sums FROM (
  SELECT tbl, 1 AS sign, sha256(convert_to(new::text, 'UTF8')) AS h FROM ${A}.changes WHERE new IS NOT NULL
  UNION ALL
  SELECT tbl, -1, sha256(convert_to(old::text, 'UTF8')) FROM ${A}.changes WHERE old IS NOT NULL
) AS hashed GROUP BY tbl`;

/** The 256-bit sum of eight per-word sums (as the server returns them: decimal strings). */
export function combineSums(sums: string[]): bigint {
  let value = 0n;
  for (const s of sums) value = value * (1n << 32n) + BigInt(s);
  return ((value % MODULUS) + MODULUS) % MODULUS;
}

/** The fingerprint of a table whose row-hash sum is `sum`. */
export function fingerprintOf(sum: bigint): string {
  return createHash('sha256').update(sum.toString(16).padStart(64, '0')).digest('hex');
}

/** Adds two row-hash sums. */
export function addSums(a: bigint, b: bigint): bigint {
  return (a + b) % MODULUS;
}
