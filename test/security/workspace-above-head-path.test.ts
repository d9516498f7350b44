// Attack: the pull_request_target layout of docs/action.md. The workspace is the BASE checkout
// (a git repository), and the fork's head is a second clone in `head/` (head-path: head), with its
// own `.git`. As a normal user (GitHub's hosted runners) in process isolation, gitMetadata() stops at
// the first `.git` above the checkout, `head/.git`, so the workspace's own `.git` stays writable to
// the head's agent: `core.fsmonitor` there runs on the next git command that reads the workspace's
// index, outside any namespace, as the runner user (actions/checkout's post step reads it with
// `git submodule foreach`, with the job's token as its input), which is the hole checkout-git-hook.test.ts
// closed for the checkout's own repository.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AS_ROOT,
  chownToNobody,
  fsmonitorTrap,
  nobodysDir,
  oneCommitRepo,
  REPLY_DONE,
  removeAfterFile,
  runAgentAsNobody,
} from '../helpers/as-nobody.js';

/** $GITHUB_WORKSPACE = the base checkout; head/ = the fork's clone beside it; all owned by the runner user. */
function targetLayout(): { workspace: string; head: string } {
  // Not under /tmp, which the agent gets fresh: like /home/runner/work/REPO/REPO.
  const workspace = oneCommitRepo(removeAfterFile(mkdtempSync('/var/tmp/sg-head-path-ws-')), 'stategate.yml');
  const head = join(workspace, 'head');
  mkdirSync(head);
  oneCommitRepo(head, 'agent.sh');
  chownToNobody(workspace);
  return { workspace, head };
}

describe('a head in head-path plants a git hook in the workspace (base) repository', () => {
  it.runIf(AS_ROOT)(
    "cannot change the workspace's .git above head-path, so a later git command there runs nothing",
    async () => {
      const { workspace, head } = targetLayout();
      const trap = fsmonitorTrap('sg-head-path-leak-');
      const configBefore = readFileSync(join(workspace, '.git', 'config'), 'utf8');
      const run = await runAgentAsNobody({
        command: `${trap.plant(['-C', '..'])}\n${REPLY_DONE}`,
        checkout: head,
        hide: [join(workspace, '.stategate')],
      });
      expect(run.exitCode).toBe(0);

      // Later, outside any namespace: actions/checkout's post step in the workspace (its token in INPUT_TOKEN).
      trap.laterGit(
        workspace,
        ['submodule', 'foreach', '--recursive', 'true'],
        'ghs_canaryTokenOfTheBaseRepo',
      );
      expect({
        workspaceConfigChanged: readFileSync(join(workspace, '.git', 'config'), 'utf8') !== configBefore,
        leaked: trap.leaked(),
      }).toEqual({ workspaceConfigChanged: false, leaked: '' });
    },
  );

  it.runIf(AS_ROOT)(
    "reaches neither the out dir nor the other side's checkout, and cannot rewrite the base checkout's files above head-path",
    async () => {
      const { workspace, head } = targetLayout();
      const out = join(workspace, '.stategate');
      mkdirSync(out);
      writeFileSync(join(out, 'report.json'), '{"honest":true}');
      const baseSide = nobodysDir('sg-head-path-base-side-');
      writeFileSync(join(baseSide, 'agent.sh'), 'base');
      // A local action a later step of the job runs (`uses: ./.github/actions/post`), in the base's checkout.
      mkdirSync(join(workspace, '.github', 'actions', 'post'), { recursive: true });
      writeFileSync(join(workspace, '.github', 'actions', 'post', 'index.js'), '// base code');
      chownToNobody(workspace);
      chownToNobody(baseSide);
      const command = [
        `(echo '{"forged":true}' > ../.stategate/report.json) 2>/dev/null && echo out-written`,
        `cat ${baseSide}/agent.sh 2>/dev/null && echo other-side-read`,
        `(echo 'process.exit(0) // fork code' > ../.github/actions/post/index.js) 2>/dev/null && echo local-action-written`,
        REPLY_DONE,
      ].join('\n');
      const run = await runAgentAsNobody({ command, checkout: head, hide: [out, baseSide] });
      expect(run.exitCode).toBe(0);
      expect({
        out: readFileSync(join(out, 'report.json'), 'utf8'),
        otherSideRead: run.stdout.includes('other-side-read'),
        localAction: readFileSync(join(workspace, '.github', 'actions', 'post', 'index.js'), 'utf8'),
      }).toEqual({ out: '{"honest":true}', otherSideRead: false, localAction: '// base code' });
    },
  );
});
