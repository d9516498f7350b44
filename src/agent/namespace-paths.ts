// The paths an agent namespace protects, worked out on the host before it starts: the git
// metadata of every repository around the checkout (read-only to the agent) and the folders above
// every covered or read-only path (pinned, so the agent cannot rename them).
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** Whether `path` is `dir` or inside it. */
export function inside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Whether `path` is a directory (following symlinks); false when it is absent. */
export function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The git metadata of the repository holding the checkout: its `.git` (a directory, or the file of
 * a worktree) and, for a worktree, the gitdir it names and the common dir. Whoever can write these
 * can set core.fsmonitor or a hook, which the next `git status` outside the namespace runs.
 */
export function gitMetadata(checkout: string): string[] {
  // Every enclosing repository, not only the nearest: a head checked out inside the workspace
  // (head-path) sits in the workspace's repository too, whose .git later workflow steps use.
  return gitRoots(checkout).flatMap((r) => r.metadata);
}

/** The repositories enclosing `checkout`, nearest first: their top directory and git metadata. */
export function gitRoots(checkout: string): { top: string; metadata: string[] }[] {
  const roots: { top: string; metadata: string[] }[] = [];
  let dir = resolve(checkout);
  for (;;) {
    const metadata = gitMetadataAt(dir);
    if (metadata) roots.push({ top: dir, metadata });
    const up = dirname(dir);
    if (up === dir) return roots;
    dir = up;
  }
}

/** The git metadata of a repository whose top is `dir`, or null when `dir` has no `.git`. */
function gitMetadataAt(dir: string): string[] | null {
  const dotGit = join(dir, '.git');
  let isFile = false;
  try {
    // Followed: a `.git` symlink names the repository too (its target is what gets covered).
    const st = statSync(dotGit);
    if (st.isDirectory()) return [dotGit];
    isFile = st.isFile();
  } catch {
    return null;
  }
  if (!isFile) return null;
  const paths = [dotGit];
  let named: string | undefined;
  try {
    named = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'))?.[1];
  } catch {
    // Unreadable: git cannot follow it either.
  }
  if (named) {
    const gitdir = resolve(dir, named);
    if (isDir(gitdir)) paths.push(gitdir);
    try {
      const common = resolve(gitdir, readFileSync(join(gitdir, 'commondir'), 'utf8').trim());
      if (isDir(common)) paths.push(common);
    } catch {
      // Not a linked worktree's gitdir: nothing shared beyond it.
    }
  }
  return paths;
}

/** The path with symlinks resolved (the folder a mount lands on); as given when it does not exist. */
export function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/**
 * The folders above `paths` (not `/`, nothing under a scratch directory, whose real content the
 * agent never sees), top first so each bind carries the ones made before it.
 */
export function guardedAncestors(paths: string[], scratch: string[]): string[] {
  const dirs = new Set<string>();
  for (const path of paths) {
    for (let dir = dirname(realPath(path)); dir !== dirname(dir); dir = dirname(dir))
      if (!scratch.some((d) => inside(dir, d))) dirs.add(dir);
  }
  return [...dirs].sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
}
