// The database failing in another way: clones can no longer be created mid-run. The harness's role
// loses CREATEDB (an administrator tightening a shared server) while an episode runs; the clones the
// engine made ahead still serve the next episodes, then every clone fails. Those episodes are
// incomplete and carry the server's message, the verdict is not PASS, the run finishes and
// reports, and no database and no agent process is left behind.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/pipeline.js';
import { agentSharedDir } from '../helpers/agent-dir.js';
import { kvSuite, readEpisodes, TEST_DATABASE_URL } from './kv-suite.js';

/** What PostgreSQL says to CREATE DATABASE from a role without CREATEDB. */
const CAUSE = /permission denied to create database/;

/** Every process below this one (agents and whatever they started). */
function descendants(): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // A zombie runs nothing; it only waits to be reaped.
      if (fields[0] === 'Z') continue;
      const ppid = Number(fields[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      out.push(child);
      walk(child);
    }
  };
  walk(process.pid);
  return out;
}

// Not the run-prefix shape (sg_ and 8 hex digits), so no sweep ever mistakes it for a leftover.
const role = `stategate_clone_test_${randomBytes(4).toString('hex')}`;
const password = randomBytes(12).toString('hex');
const roleUrl = (() => {
  const u = new URL(TEST_DATABASE_URL);
  u.username = role;
  u.password = password;
  return u.toString();
})();
const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });

/**
 * The databases the test role made: every clone and template of the run. Each is owned by the
 * run's unprivileged suite role, which the test role (not a superuser) joins to create them.
 */
async function ownedDatabases(): Promise<string[]> {
  const r = await admin.query<{ datname: string }>(
    "SELECT datname FROM pg_database d WHERE pg_has_role($1, d.datdba, 'MEMBER')",
    [role],
  );
  return r.rows.map((row) => row.datname);
}

const signals = agentSharedDir('sg-clone-');
const running = join(signals, 'running');
const revoked = join(signals, 'revoked');
const dir = kvSuite({
  scenarios: ['first', 'second', 'third', 'fourth'],
  engine: 'postgres',
  concurrency: 1,
  // The first episode of scenario `first` says it is running and waits until CREATEDB is gone;
  // then every episode writes.
  agent: `
import { existsSync, writeFileSync } from 'node:fs';
if (process.env.STATEGATE_SCENARIO === 'first' && !existsSync(${JSON.stringify(revoked)})) {
  writeFileSync(${JSON.stringify(running)}, '');
  const until = Date.now() + 60000;
  while (!existsSync(${JSON.stringify(revoked)}) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}
const put = await call(url, 'put', { k: 'a', v: 'b' });
done({ put: put.status });
`,
  expect: `  - id: one-write
    query: SELECT count(*) FROM kv WHERE k = 'a'
    equals: 1
`,
});

beforeAll(async () => {
  await admin.connect();
  await admin.query(
    `CREATE ROLE ${pg.escapeIdentifier(role)} LOGIN CREATEDB CREATEROLE PASSWORD ${pg.escapeLiteral(password)}`,
  );
});

afterAll(async () => {
  for (const name of await ownedDatabases()) {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  }
  await admin.query(`DROP ROLE IF EXISTS ${pg.escapeIdentifier(role)}`);
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
  rmSync(signals, { recursive: true, force: true });
});

describe('clones that cannot be created mid-run (postgres engine)', () => {
  it('makes the affected cases incomplete with the server message, and still reports', {
    timeout: 180_000,
  }, async () => {
    const out = join(dir, 'out');
    const run = runCompare({
      base: dir,
      head: dir,
      repo: dir,
      out,
      engine: 'postgres',
      databaseUrl: roleUrl,
    });
    const until = Date.now() + 150_000;
    while (!existsSync(running) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(running)).toBe(true);
    // The template and the clones made so far exist: the run did create databases as this role.
    expect((await ownedDatabases()).length).toBeGreaterThan(1);
    await admin.query(`ALTER ROLE ${pg.escapeIdentifier(role)} NOCREATEDB`);
    writeFileSync(revoked, '');

    const { report } = await run;
    expect(report.verdict).not.toBe('PASS');

    // Every episode ran to a record: none was lost and none hung.
    const episodes = readEpisodes(out);
    expect(episodes).toHaveLength(8);
    const failed = episodes.filter((g) => g.record.infraError);
    // Clones made ahead serve a few episodes after the revoke; the last ones cannot get a clone.
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed.length).toBeLessThan(episodes.length);
    for (const g of failed) {
      expect(g.passed).toBe(false);
      expect(g.record.infraError!.stage).toBe('sandbox');
      expect(g.record.infraError!.message).toMatch(CAUSE);
      // The message says which step failed, not only what the server said.
      expect(g.record.infraError!.message).toMatch(/could not create the episode's database/);
    }
    for (const c of report.cases) {
      const hit = failed.some((g) => g.record.scenario === c.id);
      if (!hit) continue;
      expect(c.class).toBe('incomplete');
      expect(c.reason).toMatch(/could not be graded/);
      expect(c.reason).toMatch(CAUSE);
    }
    expect(report.counts.incomplete).toBeGreaterThanOrEqual(1);
    expect(existsSync(join(out, 'report.json'))).toBe(true);
    expect(existsSync(join(out, 'report.md'))).toBe(true);

    // Nothing is left: no template, no clone (made ahead or not), no agent process.
    expect(await ownedDatabases()).toEqual([]);
    expect(descendants()).toEqual([]);
  });
});
