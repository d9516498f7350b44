// Isolation under load: eight episodes at once write the same key, wait for one another, and read
// back; each sees only the fixture row and its own write, through the real pipeline.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/pipeline.js';
import { agentSharedDir } from '../helpers/agent-dir.js';
import { kvSuite, readEpisodes, replyOf, TEST_DATABASE_URL } from './kv-suite.js';

const barrier = agentSharedDir('sg-barrier-');
const dir = kvSuite({
  scenarios: ['same-key-a', 'same-key-b'],
  repeats: 2,
  concurrency: 8,
  // Each episode writes, then waits until all eight have written (a file per episode) before
  // reading back, so every read happens while the other seven rows exist somewhere.
  agent: `
import { readdirSync, writeFileSync } from 'node:fs';
const mine = process.env.STATEGATE_EPISODE + '-' + process.pid;
const put = await call(url, 'put', { k: 'shared', v: mine });
writeFileSync(${JSON.stringify(barrier)} + '/' + mine, '');
const until = Date.now() + 20000;
while (readdirSync(${JSON.stringify(barrier)}).length < 8 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
const list = await call(url, 'list', {});
done({ mine, put: put.status, waited: readdirSync(${JSON.stringify(barrier)}).length, rows: JSON.parse(list.body).result });
`,
  expect: `  - id: one-write
    query: SELECT count(*) FROM kv WHERE k = 'shared'
    equals: 1
`,
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(barrier, { recursive: true, force: true });
});

describe('eight concurrent episodes writing the same key', () => {
  it('never see one another', { timeout: 180_000 }, async () => {
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
    expect(episodes).toHaveLength(8);
    const mines = new Set<string>();
    for (const g of episodes) {
      expect(g.record.infraError).toBeUndefined();
      const r = replyOf(g);
      expect(r.put).toBe(200);
      // All eight had written before this one read.
      expect(r.waited).toBe(8);
      expect(r.rows).toEqual([
        { k: 'seed', v: 'fixture' },
        { k: 'shared', v: r.mine },
      ]);
      expect(g.record.diff.tables.kv.inserted.map((c) => c.after)).toEqual([{ k: 'shared', v: r.mine }]);
      expect(g.passed).toBe(true);
      mines.add(r.mine);
    }
    expect(mines.size).toBe(8);
    expect(report.verdict).toBe('PASS');
    // The per-case spool the report was built from is gone; episodes.jsonl and the reports stay.
    expect(readdirSync(out).sort()).toEqual(['episodes.jsonl', 'report.html', 'report.json', 'report.md']);
    expect(report.cases.map((c) => c.class)).toEqual(['unchanged', 'unchanged']);
  });
});
