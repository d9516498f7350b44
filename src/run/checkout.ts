// A side's files: a directory as is, or a git ref checked out into a temporary worktree that is
// removed afterwards (also on failure and on interruption).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Checkout {
  /** What the user named: a directory or a ref. */
  ref: string;
  dir: string;
  /** The commit, when the side is a git ref or a directory inside a repository. */
  sha: string | null;
  dispose(): Promise<void>;
}

async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run('git', args, { cwd, maxBuffer: 16 << 20 });
  return stdout.trim();
}

const live = new Set<{ repo: string; dir: string }>();

/** Removes every worktree this process added; used by the interruption handler. */
export async function removeAllWorktrees(): Promise<void> {
  await Promise.all([...live].map((w) => removeWorktree(w)));
}

async function removeWorktree(w: { repo: string; dir: string }): Promise<void> {
  live.delete(w);
  await git(w.repo, ['worktree', 'remove', '--force', w.dir]).catch(() => undefined);
  await git(w.repo, ['worktree', 'prune']).catch(() => undefined);
  rmSync(dirname(w.dir), { recursive: true, force: true });
}

/**
 * Resolves a side: an existing directory is used in place; anything else must be a git ref of
 * `repo`, checked out detached into a temporary worktree.
 */
export async function resolveCheckout(spec: string, repo: string): Promise<Checkout> {
  const asDir = resolve(repo, spec);
  if (existsSync(asDir) && statSync(asDir).isDirectory()) {
    const sha = await git(asDir, ['rev-parse', 'HEAD']).catch(() => null);
    return { ref: spec, dir: asDir, sha, dispose: async () => undefined };
  }
  let sha: string;
  try {
    sha = await git(repo, ['rev-parse', '--verify', '--quiet', `${spec}^{commit}`]);
  } catch {
    throw new Error(`'${spec}' is neither a directory nor a git ref of ${repo}`);
  }
  const dir = join(mkdtempSync(join(tmpdir(), 'stategate-wt-')), 'checkout');
  const entry = { repo, dir };
  live.add(entry);
  try {
    await git(repo, ['worktree', 'add', '--detach', '--force', dir, sha]);
  } catch (err) {
    live.delete(entry);
    rmSync(dirname(dir), { recursive: true, force: true });
    throw new Error(`could not check out ${spec} (${sha.slice(0, 12)}): ${(err as Error).message}`);
  }
  return { ref: spec, dir, sha, dispose: () => removeWorktree(entry) };
}
