// Red team: on GitHub's hosted runners the harness's PATH starts with folders of the runner's user
// (~/.local/bin, ~/.cargo/bin), the agent's own uid as a normal user. An agent that puts a `git`
// there has the harness run it after the episodes (removing the base's worktree), outside every
// namespace, with the harness's environment: its tokens, and everything it writes after.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentSharedDir, projectForOthers } from '../helpers/agent-dir.js';
import { ROOT, writeDemoFiles } from '../helpers/demo-repo.js';

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SCENARIO = 'refund-timeout-after-mutation';
const CANARY = 'ghs_redteam3CanaryToken';
const top = agentSharedDir('sg-path-plant-');
afterAll(() => rmSync(top, { recursive: true, force: true }));
// The harness runs as nobody: from a copy it can read when the project is out of its reach.
const project = projectForOthers(ROOT);
afterAll(() => {
  if (project.copy) rmSync(project.copy, { recursive: true, force: true });
});
const home = join(top, 'home');
const repo = join(top, 'repo');
const userBin = join(home, '.local', 'bin');
const leak = join(top, 'leaked');
const attemptsFile = join(top, 'attempts.log');
const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
// The runner's PATH: the user's own folders first.
const PATH = `${userBin}:${process.env.PATH}`;

const asUser = (args: string[], cwd: string) =>
  execFileSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...args], {
    cwd,
    env: { PATH, HOME: home },
    stdio: 'pipe',
  });

const HOSTILE = `import { appendFileSync, chmodSync, mkdirSync, writeFileSync } from 'node:fs';
const bin = ${JSON.stringify(userBin)};
try {
  mkdirSync(bin, { recursive: true });
  writeFileSync(bin + '/git', '#!/bin/sh\\nprintf "%s\\\\n" "$INPUT_GITHUB_TOKEN" >> ${leak}\\nexec ${realGit} "$@"\\n');
  chmodSync(bin + '/git', 0o755);
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
      // The variable the action's token input arrives in, as a shell can name it.
      {
        cwd: project.path,
        // STATEGATE_AGENT_BIND: the folder the attempts are logged in, shared with the agents (agent-dir.ts).
        env: {
          PATH,
          HOME: home,
          INPUT_GITHUB_TOKEN: CANARY,
          STATEGATE_AGENT_BIND: process.env.STATEGATE_AGENT_BIND,
        },
        stdio: 'ignore',
      },
    );
    child.on('error', fail);
    child.on('close', done);
  });
}

describe("red team: the agent puts a git on the harness's PATH", () => {
  it.runIf(asRoot)('is never run by the harness', { timeout: 600_000 }, async () => {
    for (const d of [home, repo]) mkdirSync(d, { recursive: true });
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, top]);
    asUser(['git', 'init', '-q', '-b', 'main'], repo);
    asUser(['git', 'config', 'user.email', 'ci@example.com'], repo);
    asUser(['git', 'config', 'user.name', 'ci'], repo);
    commit('v1.2.4', 'base', false);
    commit('v1.3.0', 'hostile', true);

    expect(await compareAsUser()).toBe(0);
    expect(readFileSync(attemptsFile, 'utf8').trim().split('\n').length).toBeGreaterThan(0);
    expect(existsSync(leak) ? readFileSync(leak, 'utf8') : '').toBe('');
    // A second run on the same machine starts after the plant: it must not run it either.
    expect(await compareAsUser()).toBe(0);
    expect(existsSync(leak) ? readFileSync(leak, 'utf8') : '').toBe('');
  });
});
