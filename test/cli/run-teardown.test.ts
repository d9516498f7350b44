// `stategate run` on the postgres engine exits without waiting for its databases to be dropped: a
// child process it leaves drops them (test/sandbox/detached-drop.test.ts shows it outlives the
// command). Whatever the timing, nothing of the run stays on the server: no database, no role.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onServer, TEST_DATABASE_URL } from '../helpers/engines.js';
import { initializedSuite, stategate } from '../helpers/stategate-cli.js';

let dir: string;
beforeAll(() => {
  dir = initializedSuite('sg-teardown-');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Databases and roles whose owner comment names process `pid`. */
function ownedBy(pid: number): Promise<string[]> {
  return onServer(TEST_DATABASE_URL, async (c) => {
    const r = await c.query<{ name: string }>(
      `WITH owned AS (
         SELECT datname AS name, shobj_description(oid, 'pg_database') AS note FROM pg_database
         UNION ALL SELECT rolname, shobj_description(oid, 'pg_authid') FROM pg_authid
       )
       SELECT name FROM owned WHERE CASE WHEN note LIKE '{%' THEN note::jsonb->>'pid' END = $1`,
      [String(pid)],
    );
    return r.rows.map((row) => row.name);
  });
}

describe('stategate run on the postgres engine', () => {
  it('leaves no database or role of its run on the server', { timeout: 300_000 }, async () => {
    const res = stategate(dir, ['run', '--repeats', '1', '--engine', 'postgres', '--no-color']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('Stategate: PASS');
    let left = await ownedBy(res.pid);
    for (let i = 0; i < 600 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = await ownedBy(res.pid);
    }
    expect(left).toEqual([]);
  });
});
