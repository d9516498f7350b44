// A stand-in for a GitHub runner's layout (../shared/notes/hosted-runner.md): the work folder with
// the job's downloaded actions (whose post steps run later with the token), the tool cache and the
// runner's temp folder, the runner user's HOME, and a workspace whose checkout persisted the job's
// token in .git/config the way actions/checkout does. Everything is world-writable, so that what
// keeps an agent out is the sandbox's allowlist, not file permissions.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The hosted runner's user. */
export const RUNNER_UID = 1001;

/**
 * argv (for /usr/bin/python3) that runs `args` as runner under the seccomp filter refusing user
 * namespaces (fixtures/no-userns.py): the hosted runner stand-in.
 */
export function asRunner(args: string[]): string[] {
  return [
    join(import.meta.dirname, 'fixtures', 'no-userns.py'),
    'setpriv',
    `--reuid=${RUNNER_UID}`,
    `--regid=${RUNNER_UID}`,
    '--init-groups',
    '--',
    ...args,
  ];
}

export const JOB_TOKEN = 'ghs_canaryJobTokenOfTheRunnerLayout0001';
export const RUNTIME_TOKEN = 'canary-actions-runtime-token-of-the-layout';

export interface RunnerLayout {
  root: string;
  /** `_work`: what RUNNER_WORKSPACE's parent is on a self-hosted runner. */
  work: string;
  home: string;
  /** Where a workspace's checkout goes (`_work/REPO`). */
  workspaceParent: string;
  /** Files an attacker would append to, each existing and writable by anyone. */
  targets: string[];
  /** The runner's environment for the harness: tokens, RUNNER_TEMP, RUNNER_TOOL_CACHE, HOME. */
  env: Record<string, string>;
  needles: string[];
}

function openTree(dir: string): void {
  const st = statSync(dir);
  chmodSync(dir, st.isDirectory() ? 0o777 : 0o666);
  if (st.isDirectory()) for (const e of readdirSync(dir)) openTree(join(dir, e));
}

/** Makes the layout under a new folder of `parent`; `owner` (uid:gid) owns it when given. */
export function runnerLayout(parent: string = tmpdir()): RunnerLayout {
  const root = mkdtempSync(join(parent, 'sg-runner-'));
  chmodSync(root, 0o755);
  const work = join(root, '_work');
  const home = join(root, 'home');
  const files: Record<string, string> = {
    [join(work, '_actions', 'actions', 'checkout', 'v4', 'dist', 'index.js')]: '// the checkout post step\n',
    [join(work, '_tool', 'node', '20.0.0', 'x64', 'bin', 'node')]: '#!/bin/sh\n',
    [join(work, '_temp', 'runner-file.sh')]: '# a step script\n',
    [join(home, '.bashrc')]: '# the runner user\n',
    [join(home, '.local', 'lib', 'python3.11', 'site-packages', 'harness.pth')]: '\n',
  };
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  const workspaceParent = join(work, 'repo');
  mkdirSync(workspaceParent, { recursive: true });
  openTree(work);
  openTree(home);
  return {
    root,
    work,
    home,
    workspaceParent,
    // Also files that do not exist yet: a plant in the tool cache a later setup-node would find.
    targets: [...Object.keys(files), join(work, '_tool', 'python', '3.12.0', 'x64', 'bin', 'python3')],
    env: {
      GITHUB_TOKEN: JOB_TOKEN,
      INPUT_TOKEN: JOB_TOKEN,
      ACTIONS_RUNTIME_TOKEN: RUNTIME_TOKEN,
      RUNNER_TEMP: join(work, '_temp'),
      RUNNER_TOOL_CACHE: join(work, '_tool'),
      HOME: home,
    },
    needles: [JOB_TOKEN, RUNTIME_TOKEN, Buffer.from(`x-access-token:${JOB_TOKEN}`).toString('base64')],
  };
}

/** Makes `dir` a git repository whose config holds the token as actions/checkout persists it. */
export function persistCheckoutToken(dir: string): string {
  const git = (...args: string[]) => {
    const res = spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
    if (res.status !== 0) throw new Error(`git ${args.join(' ')}: ${res.stderr}`);
  };
  git('init', '-q');
  const basic = Buffer.from(`x-access-token:${JOB_TOKEN}`).toString('base64');
  git('config', '--local', 'http.https://github.com/.extraheader', `AUTHORIZATION: basic ${basic}`);
  git('config', '--local', 'remote.origin.url', `https://x-access-token:${JOB_TOKEN}@github.com/o/r`);
  chmodSync(join(dir, '.git', 'config'), 0o666);
  return join(dir, '.git', 'config');
}
