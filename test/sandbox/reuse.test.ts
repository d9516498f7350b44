// Databases put back for the next episode (a reserved pool, reuse.ts): whatever an episode did, the
// next one on the same database sees exactly the template. A write the change log can undo is
// undone; anything it cannot (DDL by suite SQL, settings an exposed agent gives its own role, large
// objects, a disabled trigger) gets the database re-cloned. On both engines.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine, Sandbox, Template } from '../../src/sandbox/types.js';
import { engines } from '../helpers/engines.js';

const SPEC = {
  schema: [
    {
      file: 'db/schema.sql',
      sql: `CREATE TABLE accounts (id serial PRIMARY KEY, owner text NOT NULL UNIQUE, balance numeric(12,2) NOT NULL,
  doubled numeric GENERATED ALWAYS AS (balance * 2) STORED, opened timestamptz NOT NULL DEFAULT now());
CREATE TABLE ledger (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account int NOT NULL REFERENCES accounts (id) ON DELETE CASCADE, amount numeric NOT NULL, tags text[]);
CREATE TABLE notes (body text, meta jsonb);
CREATE TABLE raw (id int PRIMARY KEY, doc json);
CREATE SEQUENCE tickets START 100;
-- A user trigger that writes elsewhere: undoing a row must not run it again.
CREATE TABLE audit (n serial PRIMARY KEY, what text);
CREATE FUNCTION note_it() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO audit (what) VALUES (TG_OP); RETURN NULL; END $$;
CREATE TRIGGER note_it AFTER INSERT OR UPDATE OR DELETE ON accounts FOR EACH ROW EXECUTE PROCEDURE note_it();`,
    },
  ],
  fixtures: [
    {
      file: 'db/seed.sql',
      sql: `INSERT INTO accounts (owner, balance, opened) VALUES ('ann', 10.50, '2024-01-01T00:00:00Z'), ('bob', 0, '2024-01-02T00:00:00Z');
INSERT INTO ledger (account, amount, tags) VALUES (1, 10.5, '{a,b}'), (2, 0, NULL);
INSERT INTO notes VALUES ('x', '{"k": 1}'), ('x', '{"k": 1}'), ('y', NULL);
INSERT INTO raw VALUES (1, '{"b": 1,  "a": 2}');
SELECT setval('tickets', 105, false);`,
    },
  ],
};

/** Everything the next episode could see of its database: rows, sequences, tables, columns, triggers. */
async function snapshot(s: Sandbox): Promise<unknown> {
  const q = async (sql: string) => (await s.query(sql)).rows;
  return {
    accounts: await q('SELECT * FROM accounts ORDER BY id'),
    ledger: await q('SELECT * FROM ledger ORDER BY id'),
    notes: await q('SELECT body, meta FROM notes ORDER BY body, meta::text'),
    raw: await q('SELECT id, doc::text AS doc FROM raw'),
    audit: await q('SELECT * FROM audit ORDER BY n'),
    sequences: await q(`SELECT (SELECT last_value || '/' || is_called FROM accounts_id_seq) AS a,
      (SELECT last_value || '/' || is_called FROM ledger_id_seq) AS l,
      (SELECT last_value || '/' || is_called FROM tickets) AS t,
      (SELECT last_value || '/' || is_called FROM audit_n_seq) AS n`),
    columns:
      await q(`SELECT table_name, column_name, data_type, column_default FROM information_schema.columns
      WHERE table_schema = 'public' ORDER BY 1, 2`),
    relations: await q(
      `SELECT relname, relkind FROM pg_class WHERE relnamespace = 'public'::regnamespace ORDER BY 1`,
    ),
    triggers: await q('SELECT tgname, tgenabled FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1, 2'),
    settings: await q(
      'SELECT setconfig FROM pg_db_role_setting WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())',
    ),
    log: await q('SELECT count(*)::int AS n FROM stategate.changes'),
  };
}

async function asAgent<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => undefined);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** The message a statement fails with, or 'ok'. */
const attempt = (c: pg.Client, sql: string) =>
  c.query(sql).then(
    () => 'ok',
    (e: Error) => e.message,
  );

describe.each(engines())('databases put back for the next episode: $name engine', ({ name, create }) => {
  let engine: Engine;
  let template: Template;
  let clean: unknown;

  beforeAll(async () => {
    engine = await create();
    template = await engine.buildTemplate(SPEC);
    await template.reserve(1);
    const first = await template.clone('first');
    clean = await snapshot(first);
    await first.dispose();
  }, 180_000);
  afterAll(async () => {
    await engine?.close();
  });

  /** One episode: a database from the pool, `fn` on it, disposed; whether the next got the same one. */
  async function episode(fn: (s: Sandbox) => Promise<void>): Promise<{ reused: boolean }> {
    const s = await template.clone('episode');
    await s.markInitial();
    await fn(s);
    await s.dispose();
    const next = await template.clone('next');
    const reused = next.name === s.name;
    // The next episode sees the template, whatever the last one did.
    expect(await snapshot(next)).toEqual(clean);
    const diff = await next.captureDiff();
    expect(diff.tables).toEqual({});
    await next.dispose();
    return { reused };
  }

  it('undoes row writes, cascades, identity and generated columns, and sequences, and reuses the database', async () => {
    const r = await episode(async (s) => {
      await s.transaction(async (tx) => {
        await tx.query("INSERT INTO accounts (owner, balance) VALUES ('cat', 3)");
        await tx.query("UPDATE accounts SET balance = balance + 1, owner = 'anne' WHERE id = 1");
        await tx.query('DELETE FROM ledger WHERE account = 2');
        await tx.query('UPDATE accounts SET id = 20 WHERE id = 2');
        await tx.query('INSERT INTO ledger (account, amount) VALUES (20, 5)');
        await tx.query('DELETE FROM accounts WHERE id = 20'); // cascades to ledger
        await tx.query(
          "DELETE FROM notes WHERE body = 'x' AND ctid = (SELECT min(ctid) FROM notes WHERE body = 'x')",
        );
        await tx.query("INSERT INTO notes VALUES ('y', NULL), ('z', '[1, 2.50]')");
        await tx.query("SELECT nextval('tickets'), nextval('tickets')");
        return null;
      });
      // A second transaction touching the same keys again, and a TRUNCATE (logged as deletes).
      await s.transaction(async (tx) => {
        await tx.query("INSERT INTO accounts (id, owner, balance) VALUES (2, 'bob2', 1)");
        await tx.query('TRUNCATE ledger');
        return null;
      });
    });
    expect(r.reused).toBe(true);
  }, 120_000);

  it('reuses a database an exposed agent wrote to, and locks the last agent out', async () => {
    let lastUrl = '';
    const r = await episode(async (s) => {
      lastUrl = await s.exposeUrl();
      await asAgent(lastUrl, async (c) => {
        await c.query("INSERT INTO accounts (owner, balance) VALUES ('eve', 1)");
        await c.query('DELETE FROM ledger');
        await c.query("SELECT nextval('tickets')");
      });
    });
    expect(r.reused).toBe(true);
    // Between leases the agents' role cannot log in at all (the test server may trust passwords).
    await expect(asAgent(lastUrl, async () => undefined)).rejects.toThrow(
      /not permitted to log in|password authentication failed/,
    );
    const next = await template.clone('after');
    const url = await next.exposeUrl();
    expect(url).not.toBe(lastUrl);
    // Where passwords count, the last agent's no longer does.
    if (name === 'embedded') {
      await expect(asAgent(lastUrl, async () => undefined)).rejects.toThrow(/password authentication failed/);
    }
    await asAgent(url, async (c) =>
      expect((await c.query('SELECT count(*)::int AS n FROM accounts')).rows[0].n).toBe(2),
    );
    await next.dispose();
  }, 120_000);

  it('leaves a database no episode still to start needs, and puts it back when one comes after all', async () => {
    const t = await engine.buildTemplate({
      schema: [{ file: 'db/counter.sql', sql: 'CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)' }],
      fixtures: [{ file: 'db/seed.sql', sql: 'INSERT INTO counter VALUES (1, 0)' }],
    });
    await t.reserve(1);
    t.expectTakes(1);
    const count = (url: string) =>
      asAgent(url, async (c) => (await c.query('SELECT n FROM counter WHERE id = 1')).rows[0].n);
    const last = await t.clone('last');
    await last.markInitial();
    await last.transaction(async (tx) => {
      await tx.query('UPDATE counter SET n = 5');
      return null;
    });
    // The run said no episode is left to start: nothing runs to put the database back.
    t.expectTakes(0);
    await last.dispose();
    expect(await count(last.url)).toBe(5);
    // More came after all: once the idle databases (clones made ahead join them) are taken, the
    // next one gets that database, put back now, as the template has it.
    const held: Sandbox[] = [];
    let late = await t.clone('late');
    while (late.name !== last.name && held.length < 4) {
      held.push(late);
      late = await t.clone('late');
    }
    expect(late.name).toBe(last.name);
    expect(await count(late.url)).toBe(0);
    await Promise.all(held.map((h) => h.dispose()));
    expect((await late.captureDiff()).tables).toEqual({});
    // A database an agent logged in to is put back at once, so the login ends with its episode.
    const url = await late.exposeUrl();
    await asAgent(url, (c) => c.query('UPDATE counter SET n = 7'));
    await late.dispose();
    await expect(asAgent(url, async () => undefined)).rejects.toThrow(
      /not permitted to log in|password authentication failed/,
    );
    // Put back at once: the next episode gets it with the agent's write undone.
    const next = t.take();
    expect(next?.name).toBe(last.name);
    expect(await count(next!.url)).toBe(0);
    await next!.dispose();
  }, 120_000);

  it('an exposed agent that tries DDL, disabling the log, or role settings leaks nothing', async () => {
    const r = await episode(async (s) => {
      await asAgent(await s.exposeUrl(), async (c) => {
        expect(await attempt(c, 'ALTER TABLE accounts ADD COLUMN evil int')).toMatch(/must be owner/);
        expect(await attempt(c, 'CREATE TABLE public.evil (x int)')).toMatch(/permission denied/);
        expect(await attempt(c, 'ALTER TABLE accounts DISABLE TRIGGER stategate_capture')).toMatch(
          /must be owner/,
        );
        expect(await attempt(c, 'DELETE FROM stategate.changes')).toMatch(/permission denied/);
        expect(await attempt(c, 'SET session_replication_role = replica')).toMatch(/permission denied/);
        // Allowed, and would reach the next agent on this role: reset when the episode ends.
        expect(await attempt(c, 'ALTER ROLE CURRENT_USER SET default_transaction_read_only = on')).toBe('ok');
        await c.query("UPDATE accounts SET balance = 99 WHERE owner = 'ann'");
      });
    });
    expect(r.reused).toBe(true);
    const next = await template.clone('after-role');
    await asAgent(await next.exposeUrl(), async (c) => {
      expect(await attempt(c, "UPDATE accounts SET balance = 1 WHERE owner = 'nobody'")).toBe('ok');
    });
    await next.dispose();
  }, 120_000);

  it('re-clones after a large object an exposed agent made', async () => {
    const r = await episode(async (s) => {
      await asAgent(await s.exposeUrl(), async (c) => {
        await c.query('SELECT lo_from_bytea(0, $1)', [Buffer.from('hidden')]);
      });
    });
    expect(r.reused).toBe(false);
  }, 120_000);

  for (const [what, sql] of [
    ['a new table', 'CREATE TABLE extra (x int); INSERT INTO extra VALUES (1)'],
    ['an altered table', 'ALTER TABLE accounts ADD COLUMN extra int DEFAULT 7'],
    [
      'a write behind a disabled trigger, re-enabled after',
      `ALTER TABLE accounts DISABLE TRIGGER stategate_capture;
       UPDATE accounts SET balance = 1000;
       ALTER TABLE accounts ENABLE TRIGGER stategate_capture`,
    ],
    [
      'a dropped trigger',
      "DROP TRIGGER stategate_capture ON notes; INSERT INTO notes VALUES ('hidden', NULL)",
    ],
    [
      'a replaced function',
      'CREATE OR REPLACE FUNCTION note_it() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$',
    ],
    [
      'a database setting',
      "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET search_path = nowhere', current_database()); END $$",
    ],
    ['a sequence altered', 'ALTER SEQUENCE tickets INCREMENT BY 5'],
  ] as const) {
    it(`re-clones after suite SQL leaves ${what}`, async () => {
      const r = await episode(async (s) => {
        await s.transaction(async (tx) => {
          for (const statement of sql.split(/;\n\s*/)) await tx.query(statement);
          return null;
        });
      });
      expect(r.reused).toBe(false);
    }, 120_000);
  }

  it("never evaluates the suite's code as the admin while putting a database back", async () => {
    // A cast to json runs whenever a row of this type becomes a JSON image; it refuses to run with
    // a superuser's rights. The put-back must succeed all the same: the admin touches no row.
    const t = await engine.buildTemplate({
      schema: [
        {
          file: 'db/cast.sql',
          sql: `CREATE TYPE mood AS ENUM ('calm', 'angry');
CREATE FUNCTION mood_json(mood) RETURNS json LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN RAISE EXCEPTION 'ran as a superuser'; END IF;
  RETURN to_json($1::text);
END $$;
CREATE CAST (mood AS json) WITH FUNCTION mood_json(mood);
CREATE TABLE moods (id int PRIMARY KEY, m mood NOT NULL);
CREATE TABLE bag (m mood);
INSERT INTO moods VALUES (1, 'calm');
INSERT INTO bag VALUES ('calm');`,
        },
      ],
      fixtures: [],
    });
    await t.reserve(1);
    const s = await t.clone('moods');
    await s.transaction(async (tx) => {
      await tx.query("UPDATE moods SET m = 'angry'");
      await tx.query("INSERT INTO moods VALUES (2, 'angry')");
      await tx.query("INSERT INTO bag VALUES ('angry')");
      return null;
    });
    await s.dispose();
    const next = await t.clone('after');
    expect(next.name).toBe(s.name);
    expect((await next.query('SELECT id, m::text FROM moods ORDER BY id')).rows).toEqual([
      { id: 1, m: 'calm' },
    ]);
    expect((await next.query('SELECT m::text FROM bag')).rows).toEqual([{ m: 'calm' }]);
    await next.dispose();
  }, 120_000);

  it('re-clones after a write to a table whose rows a JSON image cannot restore (json)', async () => {
    const r = await episode(async (s) => {
      await s.transaction(async (tx) => {
        await tx.query('UPDATE raw SET doc = \'{"a": 2, "b": 1}\'');
        return null;
      });
    });
    expect(r.reused).toBe(false);
  }, 120_000);
});
