// A run holds no more connections than its server allows (connections.ts): a connect past the
// budget waits for a slot instead of failing with "too many clients", a failed connect gives its
// slot back, a server without room says so, and a reserved pool's idle databases hold no
// connection (so concurrency 64 and 128 fit a 100-connection server). On the real servers.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Cluster } from '../../src/sandbox/cluster.js';
import { budgetedClient, ConnectionBudget, readConnectionBudget } from '../../src/sandbox/connections.js';
import { newRunPrefix } from '../../src/sandbox/names.js';
import { buildTemplate } from '../../src/sandbox/template.js';
import type { Template } from '../../src/sandbox/types.js';
import { sharedEmbeddedServer, TEST_DATABASE_URL } from '../helpers/engines.js';

const SPEC = {
  schema: [{ file: 'db/schema.sql', sql: 'CREATE TABLE items (id int PRIMARY KEY, qty int NOT NULL)' }],
  fixtures: [{ file: 'db/seed.sql', sql: 'INSERT INTO items VALUES (1, 0)' }],
};

describe('the connection budget (postgres test server)', () => {
  it('makes a connect past the budget wait for a slot, and hands it over when a connection ends', async () => {
    const budget = new ConnectionBudget(2);
    const Client = budgetedClient(budget);
    const open = () => {
      const c = new Client({ connectionString: TEST_DATABASE_URL });
      c.on('error', () => undefined);
      return c;
    };
    const [a, b, c] = [open(), open(), open()];
    await a.connect();
    await b.connect();
    let third = false;
    const connecting = c.connect().then(() => {
      third = true;
    });
    expect(budget.stats).toEqual({ used: 2, waiting: 1 });
    // A round trip on another connection: the third is still waiting for its slot, not connecting.
    await a.query('SELECT 1');
    expect(third).toBe(false);
    expect(budget.scarce).toBe(true);
    await a.end();
    await connecting;
    expect((await c.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    expect(budget.stats).toEqual({ used: 2, waiting: 0 });
    await b.end();
    await c.end();
    await vi.waitFor(() => expect(budget.stats.used).toBe(0), { timeout: 10_000 });
  });

  it('survives a backend terminated as it starts, its FATAL in the same read as its ReadyForQuery', {
    timeout: 60_000,
  }, async () => {
    // In a child: an error event nobody listens for ends the process it happens in.
    const child = fileURLToPath(new URL('./child-terminated-connect.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', child], {
      env: { ...process.env, STATEGATE_TEST_DATABASE_URL: TEST_DATABASE_URL },
      timeout: 50_000,
    });
    const { queryError } = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
    // The query on that connection fails as an ordinary error.
    expect(queryError).toMatch(/terminat|not queryable|Connection/i);
  });

  it('gives the slot back when a connect fails', async () => {
    const budget = new ConnectionBudget(1);
    const Client = budgetedClient(budget);
    const url = new URL(TEST_DATABASE_URL);
    url.pathname = '/stategate_no_such_database';
    const c = new Client({ connectionString: url.toString() });
    c.on('error', () => undefined);
    await expect(c.connect()).rejects.toThrow(/does not exist/);
    expect(budget.stats).toEqual({ used: 0, waiting: 0 });
  });

  it('reads what the server leaves, and says so when too little is left', async () => {
    const admin = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
    try {
      const r = await admin.query<{ max: number }>("SELECT current_setting('max_connections')::int AS max");
      const budget = await readConnectionBudget(admin, 1, 'the test server');
      expect(budget.limit).toBeGreaterThan(0);
      expect(budget.limit).toBeLessThan(r.rows[0].max);
      await expect(readConnectionBudget(admin, r.rows[0].max, 'the test server')).rejects.toThrow(
        `the database server at the test server allows ${r.rows[0].max} connections`,
      );
    } finally {
      await admin.end();
    }
  });
});

const SERVERS: { name: string; adminUrl: () => Promise<string> }[] = [
  { name: 'postgres', adminUrl: async () => TEST_DATABASE_URL },
  { name: 'embedded', adminUrl: async () => (await sharedEmbeddedServer()).adminUrl },
];

describe.each(SERVERS)('a reserved pool: $name engine', ({ adminUrl }) => {
  let cluster: Cluster;
  let template: Template;

  beforeAll(async () => {
    cluster = await Cluster.connect(await adminUrl(), newRunPrefix());
    template = await buildTemplate(cluster, SPEC, 2);
  }, 180_000);
  afterAll(async () => {
    await cluster?.close({ dropAll: true });
  });

  it('holds no connection while its databases are idle, and opens one when an episode takes one', async () => {
    const { budget } = cluster;
    await template.reserve(6);
    // Every pooled database, the clones made ahead included, waits without a connection.
    expect(budget.stats).toEqual({ used: 0, waiting: 0 });
    // Taken without waiting; its connection opens in the background, for the agent's first call.
    const s = template.take();
    expect(s).not.toBeNull();
    await vi.waitFor(() => expect(budget.stats.used).toBe(1), { timeout: 30_000 });
    await s!.transaction(async (tx) => tx.query('UPDATE items SET qty = qty + 1 WHERE id = 1'));
    await s!.dispose();
    // Put back, it waits as the others do: without a connection.
    await vi.waitFor(() => expect(budget.stats.used).toBe(0), { timeout: 30_000 });
    const next = await template.clone('next');
    expect(next.name).toBe(s!.name);
    expect((await next.query('SELECT qty FROM items')).rows).toEqual([{ qty: 0 }]);
    await next.dispose();
  }, 120_000);
  it('opens one connection for a database whose first query comes while it warms up', async () => {
    const { budget } = cluster;
    await template.reserve(6);
    expect(budget.stats.used).toBe(0);
    // Taken (its warm-up connection opening) just as an agent's first call arrives: the call waits
    // for that connection instead of opening a backend of its own. One slot per database is what
    // the budget counts on; two would fill it in a wave of 64 and make every later call reconnect.
    const s = template.take();
    expect(s).not.toBeNull();
    await s!.transaction(async (tx) => tx.query('UPDATE items SET qty = qty + 1 WHERE id = 1'));
    await s!.query('SELECT qty FROM items');
    await s!.readOnly('SELECT qty FROM items');
    expect(budget.stats.used).toBe(1);
    expect(budget.scarce).toBe(false);
    await s!.dispose();
    await vi.waitFor(() => expect(budget.stats.used).toBe(0), { timeout: 30_000 });
  }, 120_000);
});
