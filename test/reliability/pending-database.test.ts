// An episode's agent starts while its database is still being prepared (clone, scenario state):
// its first tool call waits for the database. That call's answer reflects the scenario's state, and
// a preparation that fails (state SQL that errors, state SQL past the timeout) makes the episode an
// infra error of stage 'sandbox', never a graded episode or a 'tool' error; its agent is stopped
// instead of running to its timeout. The real PostgreSQL server of the tests.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/pipeline.js';
import { kvSuite, readEpisodes, replyOf, TEST_DATABASE_URL } from './kv-suite.js';

const EXPECT = `  - id: listed
    tool_called: { tool: list, min: 1 }
`;

/** A scenario file with the given state section (YAML, indented under `state:`). */
function scenario(dir: string, id: string, state: string): void {
  writeFileSync(
    join(dir, 'scenarios', `${id}.yaml`),
    `id: ${id}\nstate:\n${state}input:\n  message: "${id}"\nexpect:\n${EXPECT}`,
  );
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('an agent that starts before its database is ready (postgres engine)', () => {
  it('its first tool call waits for the database and sees the scenario state', {
    timeout: 120_000,
  }, async () => {
    const dir = kvSuite({
      scenarios: [],
      engine: 'postgres',
      agent: `
const listed = await call(url, 'list', {});
done({ status: listed.status, body: JSON.parse(listed.body) });
`,
      expect: EXPECT,
    });
    dirs.push(dir);
    // The state takes a while (pg_sleep), so the agent's first call comes while it is prepared.
    scenario(
      dir,
      'stated',
      `  rows:
    kv:
      - { k: row, v: from-rows }
  sql:
    - SELECT pg_sleep(1.5)
    - INSERT INTO kv (k, v) VALUES ('sql', 'from-sql')
`,
    );
    const out = join(dir, 'out');
    await runCompare({
      base: dir,
      head: dir,
      repo: dir,
      out,
      engine: 'postgres',
      databaseUrl: TEST_DATABASE_URL,
    });
    const episodes = readEpisodes(out);
    expect(episodes).toHaveLength(2);
    for (const g of episodes) {
      expect(g.record.infraError).toBeUndefined();
      const reply = replyOf(g);
      expect(reply.status).toBe(200);
      expect(reply.body.result).toEqual([
        { k: 'row', v: 'from-rows' },
        { k: 'seed', v: 'fixture' },
        { k: 'sql', v: 'from-sql' },
      ]);
      // The call waited for the database: the agent started long before the state was in.
      expect(g.record.timings?.db_wait).toBeGreaterThan(0);
      // The episode itself did not wait for it before its agent started.
      expect(g.record.timings?.reset).toBeLessThan(1000);
      // Nothing the call did was a change of the agent's: the diff holds no row.
      expect(g.record.diff.tables).toEqual({});
    }
  });

  it('a failing or timed-out state makes the episode a sandbox error and stops its agent', {
    timeout: 180_000,
  }, async () => {
    const dir = kvSuite({
      scenarios: ['fine'],
      engine: 'postgres',
      timeout: '20s',
      // Calls a tool at once, then would wait far past its timeout: only being stopped ends it early.
      agent: `
const put = await call(url, 'put', { k: 'a', v: 'b' });
if (process.env.STATEGATE_SCENARIO !== 'fine') await new Promise((r) => setTimeout(r, 120000));
const listed = await call(url, 'list', {});
done({ put: put.status, listed: listed.status });
`,
      expect: EXPECT,
    });
    dirs.push(dir);
    // Prepares (names and types are right) but fails when it runs: kv.v is NOT NULL.
    scenario(dir, 'broken', `  sql:\n    - INSERT INTO kv (k, v) VALUES ('x', NULL)\n`);
    // Runs past the agent's timeout of 20 s: the server cancels it.
    scenario(dir, 'slow', `  sql:\n    - SELECT pg_sleep(60)\n`);
    const out = join(dir, 'out');
    const { report } = await runCompare({
      base: dir,
      head: dir,
      repo: dir,
      out,
      engine: 'postgres',
      databaseUrl: TEST_DATABASE_URL,
    });
    const episodes = readEpisodes(out);
    const of = (id: string) => episodes.filter((g) => g.record.scenario === id);
    for (const g of of('fine')) {
      expect(g.record.infraError).toBeUndefined();
      expect(g.passed).toBe(true);
    }
    for (const id of ['broken', 'slow']) {
      expect(of(id)).toHaveLength(2);
      for (const g of of(id)) {
        expect(g.passed).toBe(false);
        expect(g.record.infraError?.stage).toBe('sandbox');
        expect(g.record.infraError?.message).toMatch(/state/);
        // Nothing the agent did against a database that was never ready counts.
        expect(g.record.calls).toEqual([]);
        // Stopped, not run to its two-minute wait (nor to its 20 s timeout when the state failed).
        expect(g.record.agent.durationMs).toBeLessThan(id === 'broken' ? 10_000 : 30_000);
      }
      expect(report.cases.find((c) => c.id === id)?.class).toBe('incomplete');
    }
    for (const g of of('slow')) expect(g.record.infraError?.timedOut).toBe(true);
    for (const g of of('broken')) expect(g.record.infraError?.message).toMatch(/null value/);
  });
});
