// Attack: the pull_request_target layout of docs/action.md. The workspace is the BASE checkout
// (a git repository), and the fork's head is a second clone in `head/` (head-path: head), with its
// own `.git`. As a normal user (GitHub's hosted runners) in process isolation, gitMetadata() stops at
// the first `.git` above the checkout, `head/.git`, so the workspace's own `.git` stays writable to
// the head's agent: `core.fsmonitor` there runs on the next git command that reads the workspace's
// index, outside any namespace, as the runner user (actions/checkout's post step reads it with
// `git submodule foreach`, with the job's token as its input), which is the hole checkout-git-hook.test.ts
// closed for the checkout's own repository.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
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

function repo(dir: string, file: string): void {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  git('init', '-q');
  execFileSync('sh', ['-c', `echo x > ${file}`], { cwd: dir });
  git('add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', file);
}

/** $GITHUB_WORKSPACE = the base checkout; head/ = the fork's clone beside it; all owned by the runner user. */
function targetLayout(): { workspace: string; head: string } {
  // Not under /tmp, which the agent gets fresh: like /home/runner/work/REPO/REPO.
  const workspace = mkdtempSync('/var/tmp/sg-redteam2-ws-');
  cleanup.push(workspace);
  repo(workspace, 'stategate.yml');
  const head = join(workspace, 'head');
  mkdirSync(head);
  repo(head, 'agent.sh');
  chownTree(workspace);
  return { workspace, head };
}

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

describe('a head in head-path plants a git hook in the workspace (base) repository', () => {
  it.runIf(asRoot)(
    "cannot change the workspace's .git above head-path, so a later git command there runs nothing",
    async () => {
      const { workspace, head } = targetLayout();
      const leakDir = mkdtempSync('/var/tmp/sg-redteam2-leak-');
      cleanup.push(leakDir);
      chownSync(leakDir, NOBODY, NOBODY);
      const leak = join(leakDir, 'token');
      const configBefore = readFileSync(join(workspace, '.git', 'config'), 'utf8');
      const command = [
        `git -C .. config core.fsmonitor 'echo "$REDTEAM_HARNESS_TOKEN" > ${leak}; false' 2>&1 || echo refused`,
        'echo \'{"reply":"done"}\'',
      ].join('\n');
      const run = await runCommandAgent({
        command,
        cwd: head,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        input: { message: 'hi', context: {} },
        timeoutMs: 60_000,
        wrapper: asNobody(
          namespaceWrapper({
            checkout: head,
            hide: [join(workspace, '.stategate')],
            asRoot: false,
            uid: NOBODY,
            gid: NOBODY,
          }),
        ),
      });
      expect(run.exitCode).toBe(0);

      // Later, outside any namespace: actions/checkout's post step in the workspace (its token in INPUT_TOKEN).
      spawnSync(
        'setpriv',
        [
          `--reuid=${NOBODY}`,
          `--regid=${NOBODY}`,
          '--clear-groups',
          '--',
          'git',
          'submodule',
          'foreach',
          '--recursive',
          'true',
        ],
        {
          cwd: workspace,
          env: { PATH: process.env.PATH, REDTEAM_HARNESS_TOKEN: 'ghs_redteam2TokenOfTheBaseRepo' },
          stdio: 'pipe',
        },
      );
      const leaked = existsSync(leak) ? readFileSync(leak, 'utf8') : '';
      expect({
        workspaceConfigChanged: readFileSync(join(workspace, '.git', 'config'), 'utf8') !== configBefore,
        leaked,
      }).toEqual({ workspaceConfigChanged: false, leaked: '' });
    },
  );

  it.runIf(asRoot)(
    "reaches neither the out dir nor the other side's checkout, and cannot rewrite the base checkout's files above head-path",
    async () => {
      const { workspace, head } = targetLayout();
      const out = join(workspace, '.stategate');
      mkdirSync(out);
      writeFileSync(join(out, 'report.json'), '{"honest":true}');
      const baseSide = mkdtempSync('/var/tmp/sg-redteam2-base-side-');
      cleanup.push(baseSide);
      writeFileSync(join(baseSide, 'agent.sh'), 'base');
      // A local action a later step of the job runs (`uses: ./.github/actions/post`), in the base's checkout.
      mkdirSync(join(workspace, '.github', 'actions', 'post'), { recursive: true });
      writeFileSync(join(workspace, '.github', 'actions', 'post', 'index.js'), '// base code');
      chownTree(workspace);
      chownTree(baseSide);
      const command = [
        `(echo '{"forged":true}' > ../.stategate/report.json) 2>/dev/null && echo out-written`,
        `cat ${baseSide}/agent.sh 2>/dev/null && echo other-side-read`,
        `(echo 'process.exit(0) // fork code' > ../.github/actions/post/index.js) 2>/dev/null && echo local-action-written`,
        'echo \'{"reply":"done"}\'',
      ].join('\n');
      const run = await runCommandAgent({
        command,
        cwd: head,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        input: { message: 'hi', context: {} },
        timeoutMs: 60_000,
        wrapper: asNobody(
          namespaceWrapper({
            checkout: head,
            hide: [out, baseSide],
            asRoot: false,
            uid: NOBODY,
            gid: NOBODY,
          }),
        ),
      });
      expect(run.exitCode).toBe(0);
      expect({
        out: readFileSync(join(out, 'report.json'), 'utf8'),
        otherSideRead: run.stdout.includes('other-side-read'),
        localAction: readFileSync(join(workspace, '.github', 'actions', 'post', 'index.js'), 'utf8'),
      }).toEqual({ out: '{"honest":true}', otherSideRead: false, localAction: '// base code' });
    },
  );
});
