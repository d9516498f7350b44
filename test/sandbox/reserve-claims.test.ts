// A run does not wait for its pool: episodes that ask for a database while reserve() is still
// making them take the next ones being made, in turn, instead of making databases of their own.
// And close drops every database of the run (all at once: cluster.ts dropRun). The database the
// suite's statements were prepared on joins the pool once preparing is done, holding no connection.
// The test server.
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresEngine } from '../../src/sandbox/postgres.js';
import type { Engine } from '../../src/sandbox/types.js';
import { onServer, TEST_DATABASE_URL } from '../helpers/engines.js';

const SPEC = {
  schema: [{ file: 'db/schema.sql', sql: 'CREATE TABLE kv (k text PRIMARY KEY, v text NOT NULL)' }],
  fixtures: [{ file: 'db/seed.sql', sql: "INSERT INTO kv VALUES ('a', '1')" }],
};

/** The databases of a run, by its prefix. */
function databasesOf(prefix: string): Promise<string[]> {
  return onServer(TEST_DATABASE_URL, async (c) => {
    const r = await c.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE $1 || '\\_%' ORDER BY datname",
      [prefix],
    );
    return r.rows.map((row) => row.datname);
  });
}

describe('clones asked for while the pool is being made (postgres engine)', () => {
  let engine: Engine | undefined;
  afterAll(async () => {
    await engine?.close();
  });

  it('hands the databases being made to the episodes that ask first, and makes none more', {
    timeout: 120_000,
  }, async () => {
    engine = await createPostgresEngine({ adminUrl: TEST_DATABASE_URL, reason: 'test server' });
    const template = await engine.buildTemplate(SPEC);
    const reserving = template.reserve(6);
    // Six episodes ask at once, before any database of the pool is made.
    const got = await Promise.all(Array.from({ length: 6 }, (_, i) => template.clone(`episode-${i}`)));
    await reserving;
    expect(new Set(got.map((s) => s.name)).size).toBe(6);
    // The template and the six of the pool (the clones made ahead among them): no clone of its own.
    expect(await databasesOf(engine.runPrefix)).toHaveLength(7);
    // Each is the template's, ready to use.
    for (const s of got) expect((await s.query('SELECT v FROM kv')).rows).toEqual([{ v: '1' }]);
    for (const s of got) await s.dispose();
    const prefix = engine.runPrefix;
    await engine.close();
    engine = undefined;
    expect(await databasesOf(prefix)).toEqual([]);
  });

  it('puts the database statements were prepared on into the pool once preparing is done', {
    timeout: 120_000,
  }, async () => {
    engine = await createPostgresEngine({ adminUrl: TEST_DATABASE_URL, reason: 'test server' });
    const template = await engine.buildTemplate(SPEC);
    expect(await template.prepare('SELECT v FROM kv WHERE k = $1', 1)).toBeNull();
    // The database prepare() used, by the label its clone was given.
    const [prepared] = await onServer(TEST_DATABASE_URL, async (c) => {
      const r = await c.query<{ datname: string }>(
        `SELECT datname FROM pg_database WHERE datname LIKE $1 || '\\_%'
           AND shobj_description(oid, 'pg_database')::jsonb->>'label' = 'prepare'`,
        [engine?.runPrefix],
      );
      return r.rows.map((row) => row.datname);
    });
    expect(prepared).toBeDefined();
    const reserving = template.reserve(1);
    template.donePreparing();
    await reserving;
    // Put back (its log is empty), it is taken like any database of the pool.
    const taken: string[] = [];
    for (let i = 0; i < 200 && !taken.includes(prepared); i++) {
      const s = template.take();
      if (s) taken.push(s.name);
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(taken).toContain(prepared);
  });
});
