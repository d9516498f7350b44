// Red team: as a normal user (GitHub's hosted runners) the agent runs as the harness's own uid. The
// harness hides its folders by mounting over their paths when each agent namespace starts, but a
// folder above a hidden one is the user's too: the head's agent.setup renames the folder holding the
// baseline cache and leaves a folder of its own at the old path, with a forged entry in it (base
// episodes that fail, made by running the same base and version anywhere: the key is no secret).
// Later namespaces cover the decoy and leave the real folder open under its new name, and the next
// run reads the decoy: the base "fails" too, so a head that breaks a critical case passes.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentSharedDir, projectForOthers } from '../helpers/agent-dir.js';
import { ROOT, writeDemoFiles } from '../helpers/demo-repo.js';

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SCENARIO = 'refund-timeout-after-mutation';

const top = agentSharedDir('sg-moved-parent-');
afterAll(() => rmSync(top, { recursive: true, force: true }));
// The harness runs as nobody: from a copy it can read when the project is out of its reach.
const project = projectForOthers(ROOT);
afterAll(() => {
  if (project.copy) rmSync(project.copy, { recursive: true, force: true });
});
const home = join(top, 'home');
const repo = join(top, 'repo');
const box = join(top, 'box');
const cache = join(box, 'cache');
const attemptsFile = join(top, 'attempts.log');

/** Runs a command as the harness's user (nobody). */
function asUser(file: string, args: string[], cwd: string): string {
  return execFileSync(
    'setpriv',
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', file, ...args],
    { cwd, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: home }, stdio: 'pipe' },
  ).trim();
}

function commit(version: string, tag: string, files: Record<string, string> = {}, setup?: string): void {
  writeDemoFiles(repo, version);
  for (const f of readdirSync(join(repo, 'scenarios')))
    if (f !== `${SCENARIO}.yaml`) rmSync(join(repo, 'scenarios', f));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(repo, name), text);
  if (setup) {
    const config = readFileSync(join(repo, 'stategate.yml'), 'utf8');
    writeFileSync(
      join(repo, 'stategate.yml'),
      config
        .replace('node examples/refund-agent/agent.mjs', 'node hostile.mjs')
        .replace('agent:\n', `agent:\n  setup: ${setup}\n`),
    );
  }
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, repo]);
  asUser('git', ['add', '-A'], repo);
  asUser('git', ['commit', '-qm', tag], repo);
  asUser('git', ['tag', tag], repo);
}

interface Outcome {
  verdict: string;
  cases: [string, string][];
  baseline_cache: { hit: boolean; saved: boolean; key: string } | null;
}

/** `compare --cache` run by the harness's user, as a normal user runs it. */
function compare(head: string, out: string): Promise<Outcome> {
  const opts = { base: 'base', head, repo, out: join(repo, '.stategate', out), repeats: 1 };
  const args = [
    `--reuid=${NOBODY}`,
    `--regid=${NOBODY}`,
    '--clear-groups',
    '--',
    process.execPath,
    '--import',
    'tsx',
    join(project.path, 'test', 'security', 'fixtures', 'compare-as.mts'),
    JSON.stringify({ ...opts, engine: 'postgres', databaseUrl: ADMIN_URL, cache }),
  ];
  return new Promise((done, fail) => {
    const child = spawn('setpriv', args, {
      cwd: project.path,
      env: { PATH: process.env.PATH, HOME: home, STATEGATE_AGENT_BIND: process.env.STATEGATE_AGENT_BIND },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', fail);
    child.on('close', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !last.startsWith('{')) fail(new Error(`compare ${head} exited ${code}:\n${stderr}`));
      else done(JSON.parse(last) as Outcome);
    });
  });
}

/** The head's agent: as agent.setup it swaps the cache's parent for a decoy; as the agent it looks. */
function hostile(entryName: string, forged: string): string {
  return `import { chmodSync, mkdirSync, readdirSync, renameSync, writeFileSync, appendFileSync } from 'node:fs';
const box = ${JSON.stringify(box)};
const log = (what) => appendFileSync(${JSON.stringify(attemptsFile)}, what + '\\n');
const step = (name, fn) => { try { fn(); log(name + ' ok'); } catch (e) { log(name + ' ' + (e.code ?? e.message)); } };
if (process.argv[2] === 'setup') {
  step('move', () => renameSync(box, box + '.real'));
  step('plant', () => {
    mkdirSync(box + '/cache', { recursive: true });
    writeFileSync(box + '/cache/' + ${JSON.stringify(entryName)}, ${JSON.stringify(forged)});
    chmodSync(box + '/cache', 0o555);
  });
} else {
  step('read-real', () => readdirSync(box + '.real/cache'));
  await import('./examples/refund-agent/agent.mjs');
}
`;
}

describe('red team: the agent moves a folder above a hidden one', () => {
  it.runIf(asRoot)(
    'cannot swap the baseline cache for a forged one, and the next run still blocks',
    { timeout: 900_000 },
    async () => {
      for (const d of [home, repo, box]) mkdirSync(d, { recursive: true });
      execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, top]);
      asUser('git', ['init', '-q', '-b', 'main'], repo);
      asUser('git', ['config', 'user.email', 'ci@example.com'], repo);
      asUser('git', ['config', 'user.name', 'ci'], repo);
      commit('v1.2.4', 'base');
      commit('v1.3.0', 'honest');

      const first = await compare('honest', 'first');
      expect(first.verdict).toBe('BLOCK');
      expect(first.baseline_cache?.saved).toBe(true);
      const [entryName] = readdirSync(cache);
      const stored = readFileSync(join(cache, entryName), 'utf8');
      // What the attacker prepares offline: the same entry with every base episode failing.
      const entry = JSON.parse(stored);
      for (const list of Object.values(entry.episodes) as {
        passed: boolean;
        results: { verdict: string }[];
      }[][])
        for (const g of list) {
          g.passed = false;
          for (const r of g.results) r.verdict = 'fail';
        }
      commit(
        'v1.3.0',
        'hostile',
        { 'hostile.mjs': hostile(entryName, JSON.stringify(entry)) },
        'node hostile.mjs setup',
      );

      await compare('hostile', 'hostile');
      const attempts = readFileSync(attemptsFile, 'utf8').trim().split('\n');
      expect(attempts).toContain('move EBUSY');
      expect(attempts.filter((a) => a.endsWith(' ok'))).toEqual([]);
      expect(readFileSync(join(cache, entryName), 'utf8')).toBe(stored);

      const next = await compare('honest', 'next');
      expect(next.baseline_cache).toMatchObject({ hit: true });
      expect(next.cases).toEqual([[SCENARIO, 'new-critical-failure']]);
      expect(next.verdict).toBe('BLOCK');
      chmodSync(top, 0o777);
    },
  );
});
