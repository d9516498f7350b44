// Attack: as a normal user (GitHub's hosted runners), the agent runs in namespaces but as the
// harness's own uid, with its checkout mounted in place and writable. The head's checkout is the
// workspace, so the agent can write the workspace's `.git/config`: `core.fsmonitor` there is a
// command every later `git status` in that repository runs, outside any namespace, with the
// environment of whoever runs git: stategate itself (resolveCheckout runs `git status` on a
// directory side, `git worktree` on dispose), the action's later steps, the next job on a
// self-hosted runner. The agent thereby reaches the harness and its tokens.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AS_ROOT,
  chownToNobody,
  fsmonitorTrap,
  oneCommitRepo,
  REPLY_DONE,
  removeAfterFile,
  runAgentAsNobody,
} from '../helpers/as-nobody.js';

describe('the agent plants a git hook in its checkout for the harness to run', () => {
  it.runIf(AS_ROOT)(
    "cannot change the checkout's .git, so a later git status runs nothing of it",
    async () => {
      // A workspace-like checkout (a git repository with one commit) owned by nobody.
      const checkout = oneCommitRepo(
        removeAfterFile(mkdtempSync(join(tmpdir(), 'sg-git-hook-'))),
        'agent.sh',
      );
      chownToNobody(checkout);
      const trap = fsmonitorTrap('sg-git-hook-leak-');
      const configBefore = readFileSync(join(checkout, '.git', 'config'), 'utf8');
      // What a malicious head's agent does in one episode.
      const run = await runAgentAsNobody({ command: `${trap.plant()}\n${REPLY_DONE}`, checkout });
      expect(run.exitCode).toBe(0);

      // Later, outside any namespace, the harness's user runs git in the workspace with its secrets.
      trap.laterGit(checkout, ['status', '--porcelain'], 'ghs_canaryTokenOfTheHarness');
      expect({
        configChanged: readFileSync(join(checkout, '.git', 'config'), 'utf8') !== configBefore,
        leaked: trap.leaked(),
      }).toEqual({ configChanged: false, leaked: '' });
    },
  );
});
