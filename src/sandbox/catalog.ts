// What the template's catalog says about its tables: schema, primary key, column types.
// Every schema except the system ones and the audit schema counts, so a write to a table
// outside `public` is as visible in the diff as any other.
import type { ClientBase } from 'pg';
import { AUDIT_SCHEMA, qualified, tableKey } from './names.js';
import type { ColumnType } from './values.js';

/** One user table. */
export interface TableInfo {
  /** The name the project uses: `orders`, or `billing.invoices` outside the public schema. */
  key: string;
  schema: string;
  name: string;
  /** The quoted, schema-qualified name. */
  sql: string;
  primaryKey: string[] | null;
  /** Columns in table order. */
  columns: { name: string; type: ColumnType }[];
}

const TABLES = `
SELECT n.nspname AS schema, c.relname AS name, c.oid::int8::text AS oid,
       (SELECT array_agg(a.attname::text ORDER BY k.ord)
          FROM pg_index i
          CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
         WHERE i.indrelid = c.oid AND i.indisprimary) AS primary_key
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
   AND n.nspname NOT IN ('pg_catalog', 'information_schema', $1) AND n.nspname NOT LIKE 'pg\\_%'
 ORDER BY n.nspname, c.relname`;

// Domains are read as their base type, arrays also name their element type.
const COLUMNS = `
SELECT a.attrelid::int8::text AS rel, a.attname AS name, bt.typname AS type,
       CASE WHEN bt.typcategory = 'A' THEN et.typname END AS element
  FROM pg_attribute a
  JOIN pg_type t ON t.oid = a.atttypid
  JOIN pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
  LEFT JOIN pg_type et ON et.oid = bt.typelem
 WHERE a.attnum > 0 AND NOT a.attisdropped AND a.attrelid = ANY($1::oid[])
 ORDER BY a.attrelid, a.attnum`;

/** Reads every user table of the connected database. */
export async function readTables(client: ClientBase): Promise<TableInfo[]> {
  const tables = await client.query<{
    schema: string;
    name: string;
    oid: string;
    primary_key: string[] | null;
  }>(TABLES, [AUDIT_SCHEMA]);
  const columns = await client.query<{ rel: string; name: string; type: string; element: string | null }>(
    COLUMNS,
    [tables.rows.map((t) => t.oid)],
  );
  return tables.rows.map((t) => ({
    key: tableKey(t.schema, t.name),
    schema: t.schema,
    name: t.name,
    sql: qualified(t.schema, t.name),
    primaryKey: t.primary_key,
    columns: columns.rows
      .filter((c) => c.rel === t.oid)
      .map((c) => ({
        name: c.name,
        type: c.element ? { type: c.type, element: c.element } : { type: c.type },
      })),
  }));
}

/** Finds a table by the project's name for it (`orders` or `billing.invoices`); a clear error when unknown. */
export function findTable(tables: TableInfo[], key: string, where: string): TableInfo {
  const table = tables.find((t) => t.key === key);
  if (!table) {
    const known = tables.map((t) => t.key).join(', ') || 'none';
    throw new Error(`${where}: unknown table ${JSON.stringify(key)} (tables: ${known})`);
  }
  return table;
}
