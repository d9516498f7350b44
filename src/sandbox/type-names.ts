// Column type names of query results, looked up by OID. A clone has the template's types under
// the same OIDs, so one cache serves the template and all its clones; types created later
// (by a scenario or an agent) are looked up on first sight.
import type pg from 'pg';
import type { QueryRows } from './types.js';

/** A cache of pg_type names by OID. */
export class TypeNames {
  private readonly names = new Map<number, string>();

  /** Loads every type of a database. */
  async load(client: pg.ClientBase | pg.Pool): Promise<void> {
    const r = await client.query<{ oid: number; typname: string }>(
      'SELECT oid::int8 AS oid, typname FROM pg_type',
    );
    for (const row of r.rows) this.names.set(Number(row.oid), row.typname);
  }

  /** The plain rows and typed fields of a driver result; unknown OIDs are read from the same connection. */
  async toQueryRows(
    result: pg.QueryResult | pg.QueryResult[],
    client: pg.ClientBase | pg.Pool,
  ): Promise<QueryRows> {
    // A multi-statement text returns one result per statement; the last is the answer.
    const last = Array.isArray(result) ? result[result.length - 1] : result;
    const fields = last?.fields ?? [];
    const missing = fields.map((f) => f.dataTypeID).filter((oid) => !this.names.has(oid));
    if (missing.length > 0) {
      const r = await client.query<{ oid: number; typname: string }>(
        'SELECT oid::int8 AS oid, typname FROM pg_type WHERE oid = ANY($1::oid[])',
        [missing],
      );
      for (const row of r.rows) this.names.set(Number(row.oid), row.typname);
    }
    return {
      rows: last?.rows ?? [],
      fields: fields.map((f) => ({
        name: f.name,
        type: this.names.get(f.dataTypeID) ?? `oid:${f.dataTypeID}`,
      })),
    };
  }
}
