// Attack: a head agent goes for the baseline cache. It is told the cache folder's path (outside
// /tmp, open to everyone, so only the harness hides it) and tries to list it, rewrite the stored base
// episodes as failures (so its own regression would read "unchanged" against a base that fails as
// well: a wrong PASS on the next run) and plant an entry of its own. Every attempt fails, the entry is
// byte for byte what the honest run stored, and the next run still blocks.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/pipeline.js';
import { agentSharedDir } from '../helpers/agent-dir.js';
import { git, writeDemoFiles } from '../helpers/demo-repo.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SCENARIO = 'refund-timeout-after-mutation';
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
function commit(version: string, tag: string, hostile: boolean): void {
  writeDemoFiles(repo, version);
  for (const f of readdirSync(join(repo, 'scenarios')))
    if (f !== `${SCENARIO}.yaml`) rmSync(join(repo, 'scenarios', f));
  if (hostile) {
    writeFileSync(join(repo, 'hostile-agent.mjs'), HOSTILE);
    const config = readFileSync(join(repo, 'stategate.yml'), 'utf8');
    writeFileSync(
      join(repo, 'stategate.yml'),
      config.replace('examples/refund-agent/agent.mjs', 'hostile-agent.mjs'),
    );
  }
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', tag);
  git(repo, 'tag', tag);
}
git(repo, 'init', '-q', '-b', 'main');
git(repo, 'config', 'user.email', 'ci@example.com');
git(repo, 'config', 'user.name', 'ci');
commit('v1.2.4', 'base', false);
commit('v1.3.0', 'honest', false);
commit('v1.3.0', 'hostile', true);

const compare = (head: string, out: string) =>
  runCompare({
    base: 'base',
    head,
    repo,
    out: join(repo, '.stategate', out),
    repeats: 1,
    engine: 'postgres',
    databaseUrl: ADMIN_URL,
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
    expect(next.report.cases.map((c) => [c.id, c.class])).toEqual([[SCENARIO, 'new-critical-failure']]);
    expect(next.report.verdict).toBe('BLOCK');
  });
});
