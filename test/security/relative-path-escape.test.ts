// Attack: the action's head-path checkout inside the workspace, as a normal user. The init enters
// the checkout before it mounts the read-only workspace and the checkout's own read-only .git over
// it; an agent that kept that working directory reached the layer below the mounts by relative
// paths: `.git/config` (a core.fsmonitor or hook for later workflow steps) was writable where
// `$PWD/.git/config` was not. Every path the agent can name, relative or absolute, is refused.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommandAgent } from '../../src/agent/command.js';
import { type CommandWrapper, namespaceWrapper } from '../../src/agent/namespace.js';
import { agentSharedDir } from '../helpers/agent-dir.js';

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const workspace = agentSharedDir('sg-relative-paths-');
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

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

describe('relative paths from the agent working directory', () => {
  it.runIf(asRoot)('reach neither git metadata nor hidden folders below the mounts', async () => {
    const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'pipe' });
    git(workspace, 'init', '-q');
    const checkout = join(workspace, 'head');
    mkdirSync(checkout);
    git(checkout, 'init', '-q');
    const out = join(workspace, '.stategate');
    mkdirSync(out);
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, workspace]);
    const before = {
      head: readFileSync(join(checkout, '.git', 'config'), 'utf8'),
      workspace: readFileSync(join(workspace, '.git', 'config'), 'utf8'),
    };
    const tries = {
      'head-git-config': 'printf "[core]\\n\\tfsmonitor = touch pwned\\n" >> .git/config',
      'head-git-hook': 'echo "touch pwned" > .git/hooks/post-checkout',
      'workspace-git-config': 'echo "[core]" >> ../.git/config',
      'workspace-file': 'touch ../planted',
      'out-dir': 'ls ../.stategate',
    };
    const command = [
      ...Object.entries(tries).map(([name, cmd]) => `(${cmd}) 2>/dev/null && echo "${name}: done"`),
      'echo \'{"reply":"done"}\'',
    ].join('\n');
    const run = await runCommandAgent({
      command,
      cwd: checkout,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      input: { message: 'hi', context: {} },
      timeoutMs: 60_000,
      wrapper: asNobody(namespaceWrapper({ checkout, hide: [out], asRoot: false, uid: NOBODY, gid: NOBODY })),
    });
    expect(run.exitCode).toBe(0);
    expect(run.stdout.split('\n').filter((l) => l.endsWith(': done'))).toEqual([]);
    expect({
      head: readFileSync(join(checkout, '.git', 'config'), 'utf8'),
      workspace: readFileSync(join(workspace, '.git', 'config'), 'utf8'),
    }).toEqual(before);
  });
});
