// Episode URLs seen from the pipeline: 128-bit tokens, one per episode; an agent that calls
// another episode's URL (a closed one, or one guessed by changing its own token) gets 404 with the
// same body every time, the gateway keeps the refusal, and the run finishes and reports.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ProgressEvent } from '../../src/run/api.js';
import { runCompare } from '../../src/run/pipeline.js';
import { agentSharedDir } from '../helpers/agent-dir.js';
import { kvSuite, readEpisodes, replyOf, TEST_DATABASE_URL } from './kv-suite.js';

const shared = agentSharedDir('sg-urls-');
const EPISODES = 6;
const dir = kvSuite({
  scenarios: ['prober'],
  repeats: 3,
  concurrency: 1,
  // One at a time, each episode probes the real URLs of the episodes before it (closed by now), its
  // own token with one digit changed, and a made-up token; then calls its own URL.
  agent: `
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
const dir = ${JSON.stringify(shared)};
const earlier = readdirSync(dir).map((f) => readFileSync(dir + '/' + f, 'utf8'));
writeFileSync(dir + '/' + process.env.STATEGATE_EPISODE, url);
const token = url.slice(url.lastIndexOf('/') + 1);
const changed = url.slice(0, -1) + (token.endsWith('0') ? '1' : '0');
const madeUp = url.slice(0, url.lastIndexOf('/') + 1) + 'f'.repeat(token.length);
const probes = [];
for (const target of [...earlier, changed, madeUp]) probes.push({ target, ...(await call(target, 'list', {})) });
const own = await call(url, 'list', {});
done({ url, earlier: earlier.length, probes, own: own.status });
`,
  expect: `  - id: nothing-written
    query: SELECT count(*) FROM kv
    equals: 1
`,
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(shared, { recursive: true, force: true });
});

describe('an agent calling other episodes’ URLs', () => {
  it('is refused with the same 404, the refusals are reported, and the run finishes', {
    timeout: 180_000,
  }, async () => {
    const out = join(dir, 'out');
    const events: ProgressEvent[] = [];
    const { report } = await runCompare({
      base: dir,
      head: dir,
      repo: dir,
      out,
      engine: 'postgres',
      databaseUrl: TEST_DATABASE_URL,
      onProgress: (e) => events.push(e),
    });
    const episodes = readEpisodes(out);
    expect(episodes).toHaveLength(EPISODES);

    const tokens = new Set<string>();
    const bodies = new Set<string>();
    const earlier: number[] = [];
    for (const g of episodes) {
      const r = replyOf(g);
      // 32 hex digits: 128 bits of token, a different one for every episode.
      const token = r.url.slice(r.url.lastIndexOf('/') + 1);
      expect(token).toMatch(/^[0-9a-f]{32}$/);
      tokens.add(token);
      expect(r.probes).toHaveLength(r.earlier + 2);
      earlier.push(r.earlier);
      for (const p of r.probes) {
        expect(p, JSON.stringify({ url: r.url, p })).toMatchObject({ status: 404 });
        bodies.add(p.body);
      }
      expect(r.own).toBe(200);
      // Only the episode's own call is in its record: the probes never reached a tool.
      expect(g.record.calls.map((c) => c.tool)).toEqual(['list']);
      expect(g.passed).toBe(true);
    }
    expect(tokens.size).toBe(EPISODES);
    expect(earlier.sort()).toEqual([0, 1, 2, 3, 4, 5]);
    // A closed episode's URL, a changed token and a made-up one all answer alike.
    expect(bodies.size).toBe(1);
    expect(JSON.parse([...bodies][0])).not.toHaveProperty('episode');

    const warn = events.find((e) => e.type === 'log' && e.level === 'warn' && /refused/.test(e.message));
    expect(warn).toBeDefined();
    expect((warn as { message: string }).message).toContain(`refused ${15 + 2 * EPISODES} request(s)`);
    expect(report.verdict).toBe('PASS');
  });
});
