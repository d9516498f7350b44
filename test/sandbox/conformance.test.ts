// One suite, every engine: what an episode's sandbox must guarantee, checked on a real server.

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyScenarioState } from '../../src/sandbox/apply.js';
import { combineSums, fingerprintOf } from '../../src/sandbox/fingerprint.js';
import type { Engine, Sandbox, Template, TemplateSpec } from '../../src/sandbox/types.js';
import { RUN_CONTAINER_TESTS, requireDocker } from '../helpers/docker.js';
import { engines, onServer, testcontainersEngine } from '../helpers/engines.js';

const SCHEMA = `
CREATE TABLE customers (
  id text PRIMARY KEY,
  name text NOT NULL,
  tier text NOT NULL DEFAULT 'basic'
);
CREATE TABLE orders (
  id serial PRIMARY KEY,
  customer_id text NOT NULL REFERENCES customers (id),
  total numeric(10,2) NOT NULL CHECK (total >= 0),
  refund_count integer NOT NULL DEFAULT 0,
  meta jsonb,
  placed_at timestamptz NOT NULL DEFAULT '2024-01-01 00:00:00+00',
  touched boolean NOT NULL DEFAULT false
);
-- No primary key: diffed as a multiset.
CREATE TABLE events (kind text NOT NULL, detail text);
CREATE SCHEMA billing;
CREATE TABLE billing.invoices (id bigint PRIMARY KEY, amount numeric NOT NULL, raw bytea);

CREATE FUNCTION mark_touched() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.touched := true; RETURN NEW; END $$;
CREATE TRIGGER orders_touch BEFORE UPDATE ON orders FOR EACH ROW EXECUTE PROCEDURE mark_touched();

CREATE FUNCTION log_refund() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.refund_count <> OLD.refund_count THEN
    INSERT INTO events (kind, detail) VALUES ('refund', NEW.id::text);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER orders_refund AFTER UPDATE ON orders FOR EACH ROW EXECUTE PROCEDURE log_refund();
`;

const SPEC: TemplateSpec = {
  schema: [{ file: 'db/schema.sql', sql: SCHEMA }],
  fixtures: [
    {
      file: 'db/fixtures.yaml',
      rows: {
        customers: [
          { id: 'CUS-1', name: 'Ada' },
          { id: 'CUS-2', name: 'Bob', tier: 'gold' },
        ],
        orders: [{ customer_id: 'CUS-1', total: 120, meta: { channel: 'web', tags: ['gift'] } }],
        'billing.invoices': [{ id: '9007199254740993', amount: '10.50', raw: '\\x0102ff' }],
      },
    },
    {
      file: 'db/more.sql',
      sql: "INSERT INTO orders (customer_id, total) VALUES ('CUS-2', 50);\nINSERT INTO events VALUES ('seed', 'x'), ('seed', 'x');",
    },
  ],
};

/** Two promises that each wait until both have arrived. */
function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((r) => (release = r));
  return () => {
    arrived++;
    if (arrived === parties) release();
    return all;
  };
}

// The testcontainers engine too, with a daemon (STATEGATE_TEST_DOCKER_HOST), and always in CI.
const ALL = RUN_CONTAINER_TESTS ? [...engines(), testcontainersEngine(requireDocker)] : engines();

describe.each(ALL)('sandbox conformance: $name engine', ({ name, create, adminUrl }) => {
  let engine: Engine;
  let template: Template;
  const open: Sandbox[] = [];
  const clone = async (label: string) => {
    const s = await template.clone(label);
    open.push(s);
    return s;
  };

  beforeAll(async () => {
    engine = await create();
    template = await engine.buildTemplate(SPEC);
  });
  afterAll(async () => {
    await Promise.all(open.map((s) => s.dispose()));
    await engine?.close();
  });

  it('builds the template from schema files, YAML rows and SQL fixtures', async () => {
    expect(engine.name).toBe(name);
    expect(template.tables).toEqual({
      'billing.invoices': ['id'],
      customers: ['id'],
      events: null,
      orders: ['id'],
    });
    expect(template.hash).toMatch(/^[0-9a-f]{64}$/);
    const s = await clone('values');
    const orders = await s.query('SELECT id, customer_id, total, meta, placed_at FROM orders ORDER BY id');
    expect(orders.rows).toEqual([
      {
        id: 1,
        customer_id: 'CUS-1',
        total: '120.00',
        meta: { channel: 'web', tags: ['gift'] },
        placed_at: '2024-01-01T00:00:00Z',
      },
      { id: 2, customer_id: 'CUS-2', total: '50.00', meta: null, placed_at: '2024-01-01T00:00:00Z' },
    ]);
    expect(orders.fields.map((f) => f.type)).toEqual(['int4', 'text', 'numeric', 'jsonb', 'timestamptz']);
    const invoice = await s.query('SELECT id, amount, raw FROM billing.invoices');
    expect(invoice.rows).toEqual([{ id: '9007199254740993', amount: '10.50', raw: '\\x0102ff' }]);
    expect((await s.query('SELECT count(*)::int AS n FROM events')).rows).toEqual([{ n: 2 }]);
  });

  it('names the file, line and statement when the schema fails', async () => {
    const bad: TemplateSpec = {
      schema: [
        {
          file: 'db/bad.sql',
          sql: 'CREATE TABLE a (id int PRIMARY KEY);\n\nCREATE TABLE b (id int REFERENCES nope (id));',
        },
      ],
      fixtures: [],
    };
    await expect(engine.buildTemplate(bad)).rejects.toThrow(
      /^db\/bad\.sql:3:1: relation "nope" does not exist in: CREATE TABLE b/,
    );
    const badRows: TemplateSpec = {
      schema: [{ file: 'db/s.sql', sql: 'CREATE TABLE a (id int PRIMARY KEY, n int NOT NULL)' }],
      fixtures: [
        {
          file: 'db/rows.yaml',
          rows: {
            a: [
              { id: 1, n: 1 },
              { id: 2, n: null },
            ],
          },
        },
      ],
    };
    await expect(engine.buildTemplate(badRows)).rejects.toThrow(
      /^db\/rows\.yaml: table a: row 2: null value in column "n"/,
    );
    const unknown: TemplateSpec = {
      schema: [],
      fixtures: [{ file: 'db/rows.yaml', rows: { nope: [{ id: 1 }] } }],
    };
    await expect(engine.buildTemplate(unknown)).rejects.toThrow('db/rows.yaml: unknown table "nope"');
  });

  it('keeps two clones apart even when they write the same row at the same time', async () => {
    const [a, b] = await Promise.all([clone('a'), clone('b')]);
    const meet = barrier(2);
    // In one database the second UPDATE would wait for the first's row lock and never reach the barrier.
    const write = (s: Sandbox, total: number) =>
      s.transaction(async (tx) => {
        await tx.query('UPDATE orders SET total = $1 WHERE id = 1', [total]);
        await meet();
        return (await tx.query('SELECT total FROM orders WHERE id = 1')).rows[0].total;
      });
    const [ra, rb] = await Promise.all([write(a, 1), write(b, 2)]);
    expect([ra.value, rb.value]).toEqual(['1.00', '2.00']);
    expect((await a.query('SELECT total FROM orders WHERE id = 1')).rows[0].total).toBe('1.00');
    expect((await b.query('SELECT total FROM orders WHERE id = 1')).rows[0].total).toBe('2.00');
  });

  it('starts sequences and defaults where the template left them, in every clone', async () => {
    const [a, b] = await Promise.all([clone('seq-a'), clone('seq-b')]);
    const insert =
      'INSERT INTO orders (customer_id, total) VALUES ($1, 10) RETURNING id, refund_count, touched';
    expect((await a.query(insert, ['CUS-1'])).rows).toEqual([{ id: 3, refund_count: 0, touched: false }]);
    expect((await b.query(insert, ['CUS-2'])).rows).toEqual([{ id: 3, refund_count: 0, touched: false }]);
    expect(
      (await a.query("INSERT INTO customers (id, name) VALUES ('CUS-9', 'Eve') RETURNING tier")).rows,
    ).toEqual([{ tier: 'basic' }]);
  });

  it('enforces constraints and runs user triggers as Postgres does', async () => {
    const s = await clone('rules');
    await expect(s.query("INSERT INTO orders (customer_id, total) VALUES ('NOPE', 1)")).rejects.toThrow(
      /foreign key/,
    );
    await expect(s.query('UPDATE orders SET total = -1 WHERE id = 1')).rejects.toThrow(/check constraint/);
    await expect(s.query("INSERT INTO customers (id, name) VALUES ('CUS-1', 'Dup')")).rejects.toThrow(
      /duplicate key/,
    );
    await s.markInitial();
    await s.query('UPDATE orders SET refund_count = refund_count + 1 WHERE id = 1');
    expect((await s.query('SELECT touched FROM orders WHERE id = 1')).rows).toEqual([{ touched: true }]);
    const diff = await s.captureDiff();
    expect(diff.tables.orders.updated[0].after).toMatchObject({ id: 1, refund_count: 1, touched: true });
    expect(diff.tables.events.inserted.map((c) => c.after)).toEqual([{ kind: 'refund', detail: '1' }]);
  });

  it('diffs rows exactly: insert, update, delete, insert-then-delete, update back, keyless multisets', async () => {
    const s = await clone('diff');
    await applyScenarioState(
      s,
      {
        rows: { customers: [{ id: 'CUS-3', name: 'Cy' }] },
        sql: ["UPDATE customers SET tier = 'silver' WHERE id = 'CUS-1'"],
      },
      template.tables,
    );
    await s.markInitial();
    expect((await s.captureDiff()).tables).toEqual({});

    await s.query("INSERT INTO customers (id, name) VALUES ('CUS-4', 'Di')");
    await s.query('UPDATE orders SET total = 100 WHERE id = 1');
    await s.query('DELETE FROM orders WHERE id = 2');
    await s.query("INSERT INTO customers (id, name) VALUES ('CUS-5', 'Gone')");
    await s.query("DELETE FROM customers WHERE id = 'CUS-5'");
    await s.query("UPDATE customers SET tier = 'platinum' WHERE id = 'CUS-2'");
    await s.query("UPDATE customers SET tier = 'gold' WHERE id = 'CUS-2'");
    await s.query("DELETE FROM events WHERE ctid = (SELECT ctid FROM events WHERE kind = 'seed' LIMIT 1)");
    await s.query("INSERT INTO events VALUES ('note', NULL)");
    // A primary key that changes is a delete of the old key and an insert of the new one.
    await s.query('UPDATE billing.invoices SET id = 5 WHERE id = 9007199254740993');

    const diff = await s.captureDiff();
    expect(Object.keys(diff.tables).sort()).toEqual(['billing.invoices', 'customers', 'events', 'orders']);
    expect(diff.tables.customers).toEqual({
      table: 'customers',
      primaryKey: ['id'],
      // Each column's type, so the grader compares the row's values by it.
      columnTypes: { id: 'text', name: 'text', tier: 'text' },
      inserted: [
        {
          table: 'customers',
          op: 'insert',
          key: { id: 'CUS-4' },
          after: { id: 'CUS-4', name: 'Di', tier: 'basic' },
        },
      ],
      updated: [],
      deleted: [],
    });
    const orders = diff.tables.orders;
    expect(orders.columnTypes).toMatchObject({ total: 'numeric', meta: 'jsonb', placed_at: 'timestamptz' });
    expect(orders.inserted).toEqual([]);
    expect(orders.updated).toHaveLength(1);
    expect(orders.updated[0]).toMatchObject({
      op: 'update',
      key: { id: 1 },
      before: { id: 1, total: '120.00', touched: false, meta: { channel: 'web', tags: ['gift'] } },
      after: { id: 1, total: '100.00', touched: true, placed_at: '2024-01-01T00:00:00Z' },
    });
    expect(orders.deleted).toEqual([
      {
        table: 'orders',
        op: 'delete',
        key: { id: 2 },
        before: {
          id: 2,
          customer_id: 'CUS-2',
          total: '50.00',
          refund_count: 0,
          meta: null,
          placed_at: '2024-01-01T00:00:00Z',
          touched: false,
        },
      },
    ]);
    expect(diff.tables.events).toEqual({
      table: 'events',
      primaryKey: null,
      columnTypes: { kind: 'text', detail: 'text' },
      inserted: [{ table: 'events', op: 'insert', key: null, after: { kind: 'note', detail: null } }],
      updated: [],
      deleted: [{ table: 'events', op: 'delete', key: null, before: { kind: 'seed', detail: 'x' } }],
    });
    expect(diff.tables['billing.invoices'].inserted.map((c) => c.key)).toEqual([{ id: '5' }]);
    expect(diff.tables['billing.invoices'].deleted).toEqual([
      {
        table: 'billing.invoices',
        op: 'delete',
        key: { id: '9007199254740993' },
        before: { id: '9007199254740993', amount: '10.50', raw: '\\x0102ff' },
      },
    ]);
  });

  it('records TRUNCATE as the deletes it made', async () => {
    const s = await clone('truncate');
    await s.markInitial();
    await s.query('TRUNCATE events');
    const diff = await s.captureDiff();
    expect(diff.tables.events.deleted.map((c) => c.before)).toEqual([
      { kind: 'seed', detail: 'x' },
      { kind: 'seed', detail: 'x' },
    ]);
  });

  it('discards the connection a failed capture leaves in an aborted transaction', async () => {
    const s = await clone('capture-fails');
    await s.markInitial();
    await s.query('UPDATE orders SET total = 7 WHERE id = 1');
    // Behind the harness: the log is gone for a moment, so a statement of the capture's one query fails.
    const asAdmin = async (sql: string) => {
      const u = new URL(await adminUrl());
      u.pathname = `/${s.name}`;
      await onServer(u.toString(), (c) => c.query(sql));
    };
    await asAdmin('ALTER TABLE stategate.changes RENAME TO changes_away');
    await expect(s.captureDiff()).rejects.toThrow(/changes/);
    await asAdmin('ALTER TABLE stategate.changes_away RENAME TO changes');
    // Were the failed connection handed on, this would fail: "current transaction is aborted".
    expect((await s.query('SELECT total::text AS total FROM orders WHERE id = 1')).rows).toEqual([
      { total: '7.00' },
    ]);
    expect((await s.captureDiff()).tables.orders.updated.map((c) => c.after?.total)).toEqual(['7.00']);
  });

  it("returns each transaction's own net changes, and nothing of one that rolled back", async () => {
    const s = await clone('tx');
    await s.markInitial();
    const first = await s.transaction(async (tx) => {
      await tx.query("UPDATE customers SET name = 'Ada L.' WHERE id = $1", ['CUS-1']);
      await tx.query("INSERT INTO customers (id, name) VALUES ('T-1', 'tmp')");
      await tx.query("DELETE FROM customers WHERE id = 'T-1'");
      return 'ok';
    });
    expect(first.value).toBe('ok');
    expect(first.changes).toEqual([
      {
        table: 'customers',
        op: 'update',
        key: { id: 'CUS-1' },
        before: { id: 'CUS-1', name: 'Ada', tier: 'basic' },
        after: { id: 'CUS-1', name: 'Ada L.', tier: 'basic' },
      },
    ]);
    await expect(
      s.transaction(async (tx) => {
        await tx.query("INSERT INTO customers (id, name) VALUES ('T-2', 'never')");
        throw new Error('tool failed');
      }),
    ).rejects.toThrow('tool failed');
    const read = await s.transaction((tx) => tx.query('SELECT count(*)::int AS n FROM customers'));
    expect(read.changes).toEqual([]);
    expect(read.value.rows).toEqual([{ n: 2 }]);
    const diff = await s.captureDiff();
    expect(Object.keys(diff.tables)).toEqual(['customers']);
    expect(diff.tables.customers.updated).toHaveLength(1);
  });

  it('changes a fingerprint exactly when the content changes', async () => {
    const [a, b] = await Promise.all([clone('fp-a'), clone('fp-b')]);
    const initial = (await a.captureDiff()).fingerprints;
    expect(Object.keys(initial).sort()).toEqual(['billing.invoices', 'customers', 'events', 'orders']);
    await a.query("UPDATE customers SET name = 'X' WHERE id = 'CUS-1'");
    await a.query("UPDATE customers SET name = 'Ada' WHERE id = 'CUS-1'");
    expect((await a.captureDiff()).fingerprints).toEqual(initial);
    // The same rows written in different orders: same content, same fingerprint.
    await a.query("INSERT INTO events VALUES ('p', '1'), ('q', '2')");
    await b.query("INSERT INTO events VALUES ('q', '2')");
    await b.query("INSERT INTO events VALUES ('p', '1')");
    const fa = (await a.captureDiff()).fingerprints;
    const fb = (await b.captureDiff()).fingerprints;
    expect(fa.events).not.toBe(initial.events);
    expect(fa).toEqual(fb);
    // A duplicate row is content too.
    await b.query("INSERT INTO events VALUES ('p', '1')");
    expect((await b.captureDiff()).fingerprints.events).not.toBe(fa.events);
  });

  it('keeps fingerprints from the log equal to a full recount, whatever settings the writer used', async () => {
    const s = await clone('fp-full');
    await s.transaction(async (tx) => {
      await tx.query("SET LOCAL TimeZone = 'Asia/Tokyo'");
      await tx.query('SET LOCAL extra_float_digits = 0');
      await tx.query(
        "INSERT INTO orders (customer_id, total, placed_at, meta) VALUES ('CUS-1', 7, '2024-06-01 09:00:00+09', $1)",
        [{ x: 0.1 }],
      );
      await tx.query("UPDATE billing.invoices SET amount = amount * 3, raw = '\\xdead'");
      await tx.query("DELETE FROM events WHERE kind = 'seed'");
    });
    const diff = await s.captureDiff();
    for (const table of Object.keys(template.tables)) {
      const recount = await s.query('SELECT stategate.table_sums($1::regclass) AS sums', [
        table.includes('.') ? table : `public.${table}`,
      ]);
      expect(diff.fingerprints[table], table).toBe(
        fingerprintOf(combineSums(recount.rows[0].sums as string[])),
      );
    }
  });

  it('applies scenario state with clear errors for unknown tables and columns', async () => {
    const s = await clone('state');
    await expect(applyScenarioState(s, { rows: { nope: [{ id: 1 }] } }, template.tables)).rejects.toThrow(
      'state.rows: unknown table "nope"',
    );
    await expect(
      applyScenarioState(s, { rows: { customers: [{ id: 'C', name: 'n', shoe_size: 9 }] } }, template.tables),
    ).rejects.toThrow(
      /state\.rows: table customers: row 1: column "shoe_size" of relation "customers" does not exist/,
    );
    await expect(
      applyScenarioState(s, { rows: {}, sql: ['UPDATE nope SET x = 1'] }, template.tables),
    ).rejects.toThrow(/state\.sql\[0\]: relation "nope" does not exist/);
    await applyScenarioState(
      s,
      { rows: { orders: [{ customer_id: 'CUS-2', total: 5, meta: [1, 'two'] }] } },
      template.tables,
    );
    expect((await s.query('SELECT id, meta FROM orders WHERE id = 3')).rows).toEqual([
      { id: 3, meta: [1, 'two'] },
    ]);
  });

  it('prepares statements against the template without running them or staying connected', async () => {
    expect(await template.prepare('SELECT id FROM orders WHERE customer_id = $1', 1)).toBeNull();
    expect(await template.prepare('DELETE FROM orders WHERE id = 1')).toBeNull();
    expect(await template.prepare('SELECT *\nFORM orders')).toBe(
      'syntax error at or near "FORM" (line 2, column 1)',
    );
    expect(await template.prepare('SELECT nope FROM orders')).toMatch(
      /column "nope" does not exist \(line 1, column 8\)/,
    );
    expect(await template.prepare('SELECT 1; SELECT 2')).toBe('expected one statement, found 2');
    const s = await clone('after-prepare');
    expect((await s.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }]);
    const sessions = await s.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [
      template.name,
    ]);
    expect(sessions.rows).toEqual([{ n: 0 }]);
  });

  it('keeps the audit log out of the tables, and out of reach of the exposed role', async () => {
    const [s, other] = await Promise.all([clone('expose'), clone('other')]);
    expect(Object.keys(template.tables)).not.toContain('stategate.changes');
    const url = await s.exposeUrl();
    expect(new URL(url).pathname).toBe(`/${s.name}`);
    await s.markInitial();
    const agent = new pg.Client({ connectionString: url });
    await agent.connect();
    try {
      await agent.query("UPDATE customers SET tier = 'gold' WHERE id = 'CUS-1'");
      const inserted = await agent.query(
        "INSERT INTO orders (customer_id, total) VALUES ('CUS-1', 3) RETURNING id",
      );
      expect(inserted.rows).toEqual([{ id: 3 }]);
      await expect(agent.query('SELECT * FROM stategate.changes')).rejects.toThrow(
        /permission denied for schema stategate/,
      );
      await expect(agent.query('CREATE TABLE mine (id int)')).rejects.toThrow(
        /permission denied for schema public/,
      );
      await expect(agent.query('TRUNCATE events')).rejects.toThrow(/permission denied/);
    } finally {
      await agent.end();
    }
    const diff = await s.captureDiff();
    expect(diff.tables.customers.updated.map((c) => c.after?.tier)).toEqual(['gold']);
    expect(diff.tables.orders.inserted.map((c) => c.key)).toEqual([{ id: 3 }]);

    const elsewhere = (database: string) => {
      const u = new URL(url);
      u.pathname = `/${database}`;
      return new pg.Client({ connectionString: u.toString() }).connect();
    };
    await expect(elsewhere(other.name)).rejects.toThrow(`permission denied for database "${other.name}"`);
    if (name === 'embedded') {
      // The embedded server checks passwords (the test server trusts loopback, so only CONNECT guards it).
      const wrong = new URL(url);
      wrong.password = 'not-the-password';
      await expect(new pg.Client({ connectionString: wrong.toString() }).connect()).rejects.toThrow(
        /password authentication failed/,
      );
    }
    // The template takes no connections at all (a session on it would block every clone).
    await expect(elsewhere(template.name)).rejects.toThrow(
      `database "${template.name}" is not currently accepting connections`,
    );
  });

  it('drops a disposed database and its role, and on close everything of the run', async () => {
    const s = await clone('dispose');
    const role = new URL(await s.exposeUrl()).username;
    const probe = await clone('probe');
    const named = async () =>
      (
        await probe.query(
          `SELECT datname AS name FROM pg_database WHERE starts_with(datname, $1)
           UNION ALL SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1) ORDER BY 1`,
          [`${engine.runPrefix}_`],
        )
      ).rows.map((r) => r.name as string);
    expect(await named()).toEqual(expect.arrayContaining([s.name, role]));
    await s.dispose();
    const left = await named();
    expect(left).not.toContain(s.name);
    expect(left).not.toContain(role);

    // A second engine on the same server: closing it leaves nothing of its run behind.
    const other = await create();
    const t = await other.buildTemplate({
      schema: [{ file: 's.sql', sql: 'CREATE TABLE t (id int)' }],
      fixtures: [],
    });
    const c = await t.clone('left-open');
    await c.exposeUrl();
    await other.close();
    const remains = await probe.query(
      `SELECT datname AS name FROM pg_database WHERE starts_with(datname, $1)
       UNION ALL SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)`,
      [`${other.runPrefix}_`],
    );
    expect(remains.rows).toEqual([]);
    // DROP DATABASE waits for a checkpoint, which a busy shared server may take long to finish.
  }, 180_000);
});
