// A run that hands its drops off (close({ detach: true }), what the CLI does once the last episode
// has ended) ends without waiting for them, and a child process it leaves drops every database and
// role of the run after it is gone. The drops are held up on purpose (a CREATE DATABASE of the
// run's prefix blocked on a lock: the dropping child waits for such a statement to end), so a close
// that waited for its drops could not have ended while its databases were still there.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL } from '../helpers/engines.js';

const CHILD = join(import.meta.dirname, 'child-engine.ts');

async function admin(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

async function leftOf(prefix: string): Promise<string[]> {
  const client = await admin();
  try {
    const r = await client.query<{ name: string }>(
      `SELECT datname AS name FROM pg_database WHERE starts_with(datname, $1)
       UNION ALL SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)`,
      [`${prefix}_`],
    );
    return r.rows.map((row) => row.name).sort();
  } finally {
    await client.end();
  }
}

describe('an engine closed with detach (postgres engine)', () => {
  it('ends before its databases are dropped, and a child it leaves drops them all', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'postgres', '', '--detach'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const started = await new Promise<{ runPrefix: string }>((resolve, reject) => {
      child.stdout.on('data', () => {
        if (stdout.includes('\n')) resolve(JSON.parse(stdout.split('\n')[0]));
      });
      void exited.then(() => reject(new Error(`the child ended before it started: ${stderr}`)));
    });
    const prefix = started.runPrefix;
    const before = await leftOf(prefix);
    // The template, two pooled clones (and the clones made ahead), and the run's roles.
    expect(before.filter((n) => n.includes('_e_')).length).toBeGreaterThanOrEqual(2);

    // Hold up the drops: a CREATE DATABASE of the run's prefix that waits for a lock on its source.
    const source = before.find((n) => n.includes('_e_')) as string;
    const holder = await admin();
    const blocked = await admin();
    await holder.query('BEGIN');
    await holder.query(`COMMENT ON DATABASE ${holder.escapeIdentifier(source)} IS 'held by the test'`);
    const blocker = blocked
      .query(
        `CREATE DATABASE ${blocked.escapeIdentifier(`${prefix}_held`)} TEMPLATE ${blocked.escapeIdentifier(source)}`,
      )
      .then(
        () => null,
        (e: Error) => e,
      );
    try {
      // The CREATE DATABASE is waiting before the run closes.
      for (let i = 0; i < 100; i++) {
        const r = await holder.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'CREATE DATABASE%'",
        );
        if (r.rows[0].n > 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      child.stdin.write('close\n');
      expect(await exited, stderr).toBe(0);
      expect(stdout).toContain('closed');
      // The run has ended; its databases are still there, waiting for the child it left.
      expect((await leftOf(prefix)).filter((n) => n.includes('_e_')).length).toBeGreaterThanOrEqual(2);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    await blocker;
    await blocked.end();

    // Once the held CREATE DATABASE has ended, the child drops everything of the run, the database
    // that statement made included.
    let left = await leftOf(prefix);
    for (let i = 0; i < 600 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = await leftOf(prefix);
    }
    try {
      expect(left).toEqual([]);
    } finally {
      // The test's own database carries no owner comment, so no sweep would ever remove it.
      const client = await admin();
      await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(`${prefix}_held`)} WITH (FORCE)`);
      await client.end();
    }
  }, 180_000);
});
