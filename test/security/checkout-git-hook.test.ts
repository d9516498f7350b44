// Attack: as a normal user (GitHub's hosted runners), the agent runs in namespaces but as the
// harness's own uid, with its checkout mounted in place and writable. The head's checkout is the
// workspace, so the agent can write the workspace's `.git/config`: `core.fsmonitor` there is a
// command every later `git status` in that repository runs, outside any namespace, with the
// environment of whoever runs git: stategate itself (resolveCheckout runs `git status` on a
// directory side, `git worktree` on dispose), the action's later steps, the next job on a
// self-hosted runner. The agent thereby reaches the harness and its tokens.
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AS_ROOT,
  chownToNobody,
  laterGitAsNobody,
  nobodysDir,
  oneCommitRepo,
  REPLY_DONE,
  runAgentAsNobody,
} from '../helpers/as-nobody.js';

describe('the agent plants a git hook in its checkout for the harness to run', () => {
  it.runIf(AS_ROOT)(
    "cannot change the checkout's .git, so a later git status runs nothing of it",
    async () => {
      // A workspace-like checkout (a git repository with one commit) owned by nobody.
      const checkout = oneCommitRepo(nobodysDir('sg-git-hook-', tmpdir(), false), 'agent.sh');
      chownToNobody(checkout);
      const leak = join(nobodysDir('sg-git-hook-leak-'), 'token');
      const configBefore = readFileSync(join(checkout, '.git', 'config'), 'utf8');
      // What a malicious head's agent does in one episode.
      const command = [
        `git config core.fsmonitor 'echo "$HARNESS_TOKEN" > ${leak}; false' 2>&1 || echo refused`,
        REPLY_DONE,
      ].join('\n');
      const run = await runAgentAsNobody({ command, checkout });
      expect(run.exitCode).toBe(0);

      // Later, outside any namespace, the harness's user runs git in the workspace with its secrets.
      laterGitAsNobody(checkout, ['status', '--porcelain'], { HARNESS_TOKEN: 'ghs_canaryTokenOfTheHarness' });
      const leaked = existsSync(leak) ? readFileSync(leak, 'utf8') : '';
      expect({
        configChanged: readFileSync(join(checkout, '.git', 'config'), 'utf8') !== configBefore,
        leaked,
      }).toEqual({ configChanged: false, leaked: '' });
    },
  );
});
