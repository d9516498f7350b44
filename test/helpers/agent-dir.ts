// Directories both a test and its agents can reach. Agents run with a /tmp of their own, and as an
// unprivileged user when the tests run as root, so these live outside /tmp and are open to all,
// and are shared with the agents' sandbox (STATEGATE_AGENT_BIND).
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

export function agentSharedDir(prefix: string): string {
  const dir = mkdtempSync(join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), prefix));
  chmodSync(dir, 0o777);
  // The sandbox shows an agent only what it is allowed: the harness this process is (and those it
  // starts with its environment) shares the folder with its agents.
  shareWithAgents(dir);
  return dir;
}

/** Adds `dir` to STATEGATE_AGENT_BIND, the folders a harness's sandbox shares with its agents. */
export function shareWithAgents(dir: string): void {
  const dirs = (process.env.STATEGATE_AGENT_BIND ?? '').split(':').filter(Boolean);
  process.env.STATEGATE_AGENT_BIND = [...new Set([...dirs, dir])].join(':');
}

/** Whether an agent sees `path`: not under the /tmp it gets afresh, and (as root) every ancestor open to others. */
function agentSees(path: string): boolean {
  const rel = relative(tmpdir(), path);
  if (rel === '' || (!rel.startsWith('..') && !rel.startsWith('/'))) return false;
  if (userInfo().uid !== 0) return true;
  for (let dir = dirname(resolve(path)); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dir === dirname(dir)) return true;
  }
}

/**
 * `node_modules` where agents can import from it: the project's own when they see it, else (the
 * project cloned into a `mktemp -d` or /root, as CI may) a hard-linked copy in a shared directory.
 */
export function agentNodeModules(root: string): { path: string; copy: string | null } {
  const own = join(root, 'node_modules');
  if (agentSees(own)) {
    shareWithAgents(own);
    return { path: own, copy: null };
  }
  const copy = agentSharedDir('sg-node-modules-');
  linkCopy(own, join(copy, 'node_modules'));
  return { path: join(copy, 'node_modules'), copy };
}

/** Whether another user can reach `path` through every folder above it. */
function othersReach(path: string): boolean {
  for (let dir = dirname(resolve(path)); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dir === dirname(dir)) return true;
  }
}

/**
 * The project where the tests' unprivileged harness (run as nobody, like a normal user's runner) can
 * run it from source: the project itself when others reach it, else (cloned into a `mktemp -d` or
 * /root) hard-linked copies of what running it needs in a shared directory.
 */
export function projectForOthers(root: string): { path: string; copy: string | null } {
  if (othersReach(join(root, 'package.json'))) return { path: root, copy: null };
  const copy = agentSharedDir('sg-project-');
  for (const name of ['package.json', 'tsconfig.json', 'src', 'test', 'node_modules']) {
    linkCopy(join(root, name), join(copy, name));
  }
  return { path: copy, copy };
}

function linkCopy(from: string, to: string): void {
  try {
    execFileSync('cp', ['-al', from, to]);
  } catch {
    // Another filesystem: a real copy.
    execFileSync('cp', ['-a', from, to]);
  }
}
