// Attack: the action's head-path checkout inside the workspace, as a normal user. The init enters
// the checkout before it mounts the read-only workspace and the checkout's own read-only .git over
// it; an agent that kept that working directory reached the layer below the mounts by relative
// paths: `.git/config` (a core.fsmonitor or hook for later workflow steps) was writable where
// `$PWD/.git/config` was not. Every path the agent can name, relative or absolute, is refused.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentSharedDir } from '../helpers/agent-dir.js';
import { AS_ROOT, chownToNobody, runAgentAsNobody, triesDone, tryEach } from '../helpers/as-nobody.js';

const workspace = agentSharedDir('sg-relative-paths-');
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

describe('relative paths from the agent working directory', () => {
  it.runIf(AS_ROOT)('reach neither git metadata nor hidden folders below the mounts', async () => {
    const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'pipe' });
    git(workspace, 'init', '-q');
    const checkout = join(workspace, 'head');
    mkdirSync(checkout);
    git(checkout, 'init', '-q');
    const out = join(workspace, '.stategate');
    mkdirSync(out);
    chownToNobody(workspace);
    const before = {
      head: readFileSync(join(checkout, '.git', 'config'), 'utf8'),
      workspace: readFileSync(join(workspace, '.git', 'config'), 'utf8'),
    };
    const command = tryEach({
      'head-git-config': 'printf "[core]\\n\\tfsmonitor = touch pwned\\n" >> .git/config',
      'head-git-hook': 'echo "touch pwned" > .git/hooks/post-checkout',
      'workspace-git-config': 'echo "[core]" >> ../.git/config',
      'workspace-file': 'touch ../planted',
      'out-dir': 'ls ../.stategate',
    });
    const run = await runAgentAsNobody({ command, checkout, hide: [out] });
    expect(run.exitCode).toBe(0);
    expect(triesDone(run.stdout)).toEqual([]);
    expect({
      head: readFileSync(join(checkout, '.git', 'config'), 'utf8'),
      workspace: readFileSync(join(workspace, '.git', 'config'), 'utf8'),
    }).toEqual(before);
  });
});
