// Attack: a head agent goes for the baseline cache. It is told the cache folder's path (outside
// /tmp, open to everyone, so only the harness hides it) and tries to list it, rewrite the stored base
// episodes as failures (so its own regression would read "unchanged" against a base that fails as
// well: a wrong PASS on the next run) and plant an entry of its own. Every attempt fails, the entry is
// byte for byte what the honest run stored, and the next run still blocks.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/pipeline.js';
import { agentSharedDir } from '../helpers/agent-dir.js';
import {
  BLOCKING_SCENARIO,
  commitTagged,
  git,
  initRepo,
  writeBlockingScenario,
} from '../helpers/demo-repo.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const cache = agentSharedDir('sg-cache-poison-');
const shared = agentSharedDir('sg-cache-attempts-');
dirs.push(cache, shared);
const ATTEMPTS = join(shared, 'attempts.json');

const HOSTILE = `import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
const dir = ${JSON.stringify(cache)};
const attempts = [];
const attempt = (op, path, fn) => { try { fn(); attempts.push({ op, path, ok: true }); } catch (e) { attempts.push({ op, path, ok: false, error: e.code }); } };
let names = [];
attempt('list', dir, () => { names = readdirSync(dir); });
for (const name of names.filter((n) => n.startsWith('base-'))) {
  attempt('rewrite', dir + '/' + name, () => {
    const entry = JSON.parse(readFileSync(dir + '/' + name, 'utf8'));
    for (const list of Object.values(entry.episodes))
      for (const g of list) { g.passed = false; for (const r of g.results) r.verdict = 'fail'; }
    writeFileSync(dir + '/' + name, JSON.stringify(entry));
  });
}
attempt('plant', dir + '/base-' + '0'.repeat(64) + '.json', () => writeFileSync(dir + '/base-' + '0'.repeat(64) + '.json', '{}'));
writeFileSync(${JSON.stringify(ATTEMPTS)}, JSON.stringify(attempts));
await import('./examples/refund-agent/agent.mjs');
`;

const repo = mkdtempSync(join(tmpdir(), 'sg-cache-poison-repo-'));
dirs.push(repo);
const inRepo = (...args: string[]) => git(repo, ...args);
initRepo(inRepo);
for (const [version, tag, changes] of [
  ['v1.2.4', 'base', {}],
  ['v1.3.0', 'honest', {}],
  ['v1.3.0', 'hostile', { files: { 'hostile-agent.mjs': HOSTILE }, agent: 'hostile-agent.mjs' }],
] as const) {
  writeBlockingScenario(repo, version, changes);
  commitTagged(inRepo, tag);
}

const compare = (head: string, out: string) =>
  runCompare({
    base: 'base',
    head,
    repo,
    out: join(repo, '.stategate', out),
    repeats: 1,
    engine: 'postgres',
    databaseUrl: TEST_DATABASE_URL,
    cache,
  });

describe('a head agent going for the baseline cache', () => {
  it('can neither read nor change it, and the next run still blocks', { timeout: 600_000 }, async () => {
    const honest = await compare('honest', 'first');
    expect(honest.report.verdict).toBe('BLOCK');
    expect(honest.report.baseline_cache?.saved).toBe(true);
    const [entry] = readdirSync(cache);
    const stored = readFileSync(join(cache, entry));

    const hostile = await compare('hostile', 'hostile');
    expect(hostile.report.baseline_cache?.hit).toBe(true);
    expect(existsSync(ATTEMPTS)).toBe(true);
    const attempts = JSON.parse(readFileSync(ATTEMPTS, 'utf8')) as { op: string; ok: boolean }[];
    expect(attempts.map((a) => a.op)).toContain('list');
    expect(attempts.map((a) => a.op)).toContain('plant');
    expect(attempts.filter((a) => a.ok)).toEqual([]);
    expect(readdirSync(cache)).toEqual([entry]);
    expect(readFileSync(join(cache, entry)).equals(stored)).toBe(true);

    const next = await compare('honest', 'next');
    expect(next.report.baseline_cache).toMatchObject({ hit: true, reused_episodes: 1 });
    expect(next.report.cases.map((c) => [c.id, c.class])).toEqual([
      [BLOCKING_SCENARIO, 'new-critical-failure'],
    ]);
    expect(next.report.verdict).toBe('BLOCK');
  });
});
