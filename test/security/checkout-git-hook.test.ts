// Attack: as a normal user (GitHub's hosted runners), the agent runs in namespaces but as the
// harness's own uid, with its checkout mounted in place and writable. The head's checkout is the
// workspace, so the agent can write the workspace's `.git/config`: `core.fsmonitor` there is a
// command every later `git status` in that repository runs, outside any namespace, with the
// environment of whoever runs git: stategate itself (resolveCheckout runs `git status` on a
// directory side, `git worktree` on dispose), the action's later steps, the next job on a
// self-hosted runner. The agent thereby reaches the harness and its tokens.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommandAgent } from '../../src/agent/command.js';
import { type CommandWrapper, namespaceWrapper } from '../../src/agent/namespace.js';

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const cleanup: string[] = [];
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

function chownTree(path: string): void {
  chownSync(path, NOBODY, NOBODY);
  if (statSync(path).isDirectory()) for (const e of readdirSync(path)) chownTree(join(path, e));
}

/** A workspace-like checkout (a git repository with one commit) owned by nobody. */
function nobodysRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-redteam-git-'));
  cleanup.push(dir);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  git('init', '-q');
  execFileSync('sh', ['-c', 'echo agent > agent.sh'], { cwd: dir });
  git('add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'head');
  chownTree(dir);
  return dir;
}

/** The namespace runner started by nobody: a harness run by a normal user. */
function asNobody(inner: CommandWrapper): CommandWrapper {
  return {
    wrap(command) {
      const { file, args } = inner.wrap(command);
      return {
        file: 'setpriv',
        args: [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', file, ...args],
      };
    },
  };
}

describe('the agent plants a git hook in its checkout for the harness to run', () => {
  it.runIf(asRoot)(
    "cannot change the checkout's .git, so a later git status runs nothing of it",
    async () => {
      const checkout = nobodysRepo();
      const leak = join(mkdtempSync('/var/tmp/sg-redteam-leak-'), 'token');
      cleanup.push(join(leak, '..'));
      chownSync(join(leak, '..'), NOBODY, NOBODY);
      const configBefore = readFileSync(join(checkout, '.git', 'config'), 'utf8');
      // What a malicious head's agent does in one episode.
      const command = [
        `git config core.fsmonitor 'echo "$REDTEAM_HARNESS_TOKEN" > ${leak}; false' 2>&1 || echo refused`,
        'echo \'{"reply":"done"}\'',
      ].join('\n');
      const run = await runCommandAgent({
        command,
        cwd: checkout,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        input: { message: 'hi', context: {} },
        timeoutMs: 60_000,
        wrapper: asNobody(namespaceWrapper({ checkout, hide: [], asRoot: false, uid: NOBODY, gid: NOBODY })),
      });
      expect(run.exitCode).toBe(0);

      // Later, outside any namespace, the harness's user runs git in the workspace with its secrets.
      spawnSync(
        'setpriv',
        [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', 'git', 'status', '--porcelain'],
        {
          cwd: checkout,
          env: { PATH: process.env.PATH, REDTEAM_HARNESS_TOKEN: 'ghs_redteamTokenFromTheHarness' },
          stdio: 'pipe',
        },
      );
      const leaked = existsSync(leak) ? readFileSync(leak, 'utf8') : '';
      expect({
        configChanged: readFileSync(join(checkout, '.git', 'config'), 'utf8') !== configBefore,
        leaked,
      }).toEqual({ configChanged: false, leaked: '' });
    },
  );
});
