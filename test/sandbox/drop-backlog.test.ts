// Clones made faster than they can be dropped (each DROP DATABASE waits for a checkpoint) must not
// pile up: past the bound a new clone waits for a drop, so neither the harness's drop queue nor the
// databases on the server grow with the number of episodes. Sizes, never time.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster, MAX_DROP_BACKLOG, prefixPattern } from '../../src/sandbox/cluster.js';
import { newRunPrefix } from '../../src/sandbox/names.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';

const prefix = newRunPrefix();
let cluster: Cluster;
const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });

async function databasesOfRun(): Promise<number> {
  const r = await admin.query<{ n: string }>('SELECT count(*) AS n FROM pg_database WHERE datname LIKE $1', [
    prefixPattern(prefix),
  ]);
  return Number(r.rows[0].n);
}

beforeAll(async () => {
  await admin.connect();
  cluster = await Cluster.connect(TEST_DATABASE_URL, prefix);
});
afterAll(async () => {
  await cluster?.close();
  await admin.end();
});

describe('the drop queue', () => {
  it('bounds the clones waiting to be dropped, however many are made', { timeout: 300_000 }, async () => {
    const template = `${prefix}_tpl_0`;
    await cluster.createDatabase(template);
    let most = 0;
    for (let i = 1; i <= 3 * MAX_DROP_BACKLOG; i++) {
      const name = `${prefix}_e_${i}`;
      await cluster.createDatabase(name, { template });
      void cluster.queueDrop(name);
      expect(cluster.dropBacklog).toBeLessThanOrEqual(MAX_DROP_BACKLOG);
      most = Math.max(most, await databasesOfRun());
    }
    // The template, the drops in flight, and at most one clone made past them.
    expect(most).toBeLessThanOrEqual(MAX_DROP_BACKLOG + 2);
    await cluster.close();
    expect(cluster.dropBacklog).toBe(0);
    expect(await databasesOfRun()).toBe(0);
  });
});
