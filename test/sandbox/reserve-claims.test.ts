// A run does not wait for its pool: episodes that ask for a database while reserve() is still
// making them take the next ones being made, in turn, instead of making databases of their own.
// And close drops every database of the run (all at once: cluster.ts dropRun). The test server.
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
});
