// A run killed with SIGTERM cleans up before it dies: no database, role, server or data directory stays.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL } from '../helpers/engines.js';

const CHILD = join(import.meta.dirname, 'child-engine.ts');

interface Started {
  runPrefix: string;
  databases: string[];
  url: string;
}

/** Starts the child, waits for its report, sends SIGTERM, and waits for it to end. */
async function killedRun(
  args: string[],
): Promise<{ started: Started; signal: string | null; code: number | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const ended = new Promise<{ signal: string | null; code: number | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const started = await new Promise<Started>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      if (stdout.includes('\n')) resolve(JSON.parse(stdout.split('\n')[0]) as Started);
    });
    void ended.then(() => reject(new Error(`the child ended before it started: ${stderr}`)));
  });
  if (!args.includes('--exit')) child.kill('SIGTERM');
  return { started, ...(await ended) };
}

async function databasesLike(prefix: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const r = await client.query<{ name: string }>(
      `SELECT datname AS name FROM pg_database WHERE starts_with(datname, $1)
       UNION ALL SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)`,
      [`${prefix}_`],
    );
    return r.rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

describe('a run that ends without closing its engine', () => {
  const parent = mkdtempSync(join(tmpdir(), 'stategate-exit-test-'));
  // Run as root, the server runs as the postgres user, which must be able to enter the directory.
  chmodSync(parent, 0o755);
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  it('drops its databases on the postgres engine, then dies of the signal', async () => {
    const { started, signal } = await killedRun(['postgres']);
    expect(started.databases).toHaveLength(2);
    expect(signal).toBe('SIGTERM');
    expect(await databasesLike(started.runPrefix)).toEqual([]);
  }, 180_000);

  it('drops its databases when the process exits without closing the engine', async () => {
    const { started, code } = await killedRun(['postgres', '', '--exit']);
    expect(code).toBe(3);
    expect(await databasesLike(started.runPrefix)).toEqual([]);
  }, 180_000);

  it('stops the embedded server and removes its data directory', async () => {
    const { started, signal } = await killedRun(['embedded', parent]);
    expect(signal).toBe('SIGTERM');
    expect(readdirSync(parent)).toEqual([]);
    // Nothing listens on the server's port any more.
    const port = Number(new URL(started.url).port);
    const client = new pg.Client({
      host: '127.0.0.1',
      port,
      user: 'postgres',
      connectionTimeoutMillis: 2000,
    });
    await expect(client.connect()).rejects.toThrow(/ECONNREFUSED/);
  }, 180_000);
});
