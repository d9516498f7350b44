// Attack: four episodes of one side run at once (concurrency 4), each in its own sandbox over the
// side's shared /tmp and socket folder. Once all four are up (a barrier of empty marker files in the
// checkout, which carries nothing of any episode), each looks everywhere it can for a gateway
// session token: /proc (environ, cmdline of every visible process), /tmp, HOME and the harness's
// mounts (/stategate/side, /stategate/call). It must find its own token (in its own spec and
// environment) and no other episode's.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { GradedEpisode } from '../../src/model/episode.js';
import { runCompare } from '../../src/run/pipeline.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { type AttackSuite, attackSuite } from './attack-suite.js';

const EPISODES = 4;
const suites: AttackSuite[] = [];
afterAll(() => {
  for (const s of suites) rmSync(s.dir, { recursive: true, force: true });
});

const AGENT = String.raw`
import { readdirSync, readFileSync, writeFileSync, statSync, lstatSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
const { context } = JSON.parse(readFileSync(0, 'utf8'));
const own = /\/e\/([0-9a-f]{32})/.exec(process.env.STATEGATE_TOOLS_URL ?? '')?.[1] ?? null;
writeFileSync(context.drop + '/up-' + randomBytes(6).toString('hex'), '');
const until = Date.now() + 15000;
let together = false;
while (Date.now() < until) {
  if (readdirSync(context.drop).filter((n) => n.startsWith('up-')).length >= context.episodes) { together = true; break; }
  await new Promise((r) => setTimeout(r, 50));
}
const tokens = new Set();
const where = {};
const look = (text, at) => {
  for (const m of String(text).matchAll(/[0-9a-f]{32}/g)) { tokens.add(m[0]); (where[m[0]] ??= []).push(at); }
};
const walk = (dir, depth = 0) => {
  if (depth > 6) return;
  let names = [];
  try { names = readdirSync(dir); } catch { return; }
  for (const n of names) {
    const p = dir + '/' + n;
    look(n, p);
    try {
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p, depth + 1);
      else if (st.isFile() && st.size < 1e6) look(readFileSync(p, 'latin1'), p);
    } catch {}
  }
};
for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
  for (const f of ['environ', 'cmdline']) { try { look(readFileSync('/proc/' + pid + '/' + f, 'latin1'), '/proc/' + pid + '/' + f); } catch {} }
}
for (const d of ['/tmp', '/stategate', '/dev/shm', process.env.HOME]) walk(d);
const others = [...tokens].filter((t) => t !== own);
process.stdout.write(JSON.stringify({ reply: JSON.stringify({ own, together, sawOwn: tokens.has(own), others: others.map((t) => ({ t, at: where[t].slice(0, 3) })) }) }) + '\n');
`;

describe('episodes of one side running at once', () => {
  it("find no other episode's gateway token", { timeout: 120_000 }, async () => {
    const suite = attackSuite('whoami.mjs', { episodes: EPISODES });
    suites.push(suite);
    writeFileSync(join(suite.dir, 'agent.mjs'), AGENT);
    const config = join(suite.dir, 'stategate.yml');
    writeFileSync(
      config,
      readFileSync(config, 'utf8').replace('repeats: 1', `repeats: ${EPISODES}\nconcurrency: ${EPISODES}`),
    );
    const out = join(suite.dir, '.stategate');
    await runCompare({
      base: null,
      head: suite.dir,
      repo: suite.dir,
      out,
      engine: 'postgres',
      databaseUrl: TEST_DATABASE_URL,
    });
    const episodes = readFileSync(join(out, 'episodes.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as GradedEpisode);
    expect(episodes).toHaveLength(EPISODES);
    const found = episodes.map((e) => JSON.parse(e.record.agent.result?.reply ?? 'null'));
    const owns = new Set(found.map((f) => f.own));
    expect(owns.size).toBe(EPISODES);
    for (const f of found) {
      expect(f.together).toBe(true);
      expect(f.sawOwn).toBe(true);
      // Any 32-hex string may turn up by chance (a hash); another episode's token may not.
      expect(f.others.filter((o: { t: string }) => owns.has(o.t))).toEqual([]);
    }
  });
});
