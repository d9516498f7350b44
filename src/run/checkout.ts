// A side's files: a directory as is, or a git ref checked out into a temporary worktree that is
// removed afterwards (also on failure and on interruption).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { harnessExecutable } from '../sandbox/harness-path.js';

const run = promisify(execFile);

export interface Checkout {
  /** What the user named: a directory or a ref. */
  ref: string;
  dir: string;
  /** The commit, when the side is a git ref or a directory inside a repository. */
  sha: string | null;
  /** A directory whose files differ from its commit (changed or untracked files): `sha` is not what runs. */
  dirty?: boolean;
  /** The git tree of exactly the files that run (uncommitted changes included), when in a repository. */
  tree?: string | null;
  /** What the user should know about this side before trusting its label. */
  warnings?: string[];
  dispose(): Promise<void>;
}

export interface CheckoutOptions {
  /** Paths that never count as changes (the run's own output directory). */
  ignore?: string[];
}

/**
 * Put before every git subcommand Stategate runs: a repository's config (the head's checkout is
 * untrusted, and an agent may have written it) must not make git run a command in the harness.
 */
export const SAFE_GIT = ['-c', 'core.fsmonitor=', '-c', 'core.hooksPath=/dev/null'];

async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run(harnessExecutable('git'), [...SAFE_GIT, ...args], {
    cwd,
    maxBuffer: 16 << 20,
  });
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
export async function resolveCheckout(
  spec: string,
  repo: string,
  opts: CheckoutOptions = {},
): Promise<Checkout> {
  const asDir = resolve(repo, spec);
  if (existsSync(asDir) && statSync(asDir).isDirectory()) {
    const sha = await git(asDir, ['rev-parse', 'HEAD']).catch(() => null);
    if (sha === null) return { ref: spec, dir: asDir, sha, tree: null, dispose: async () => undefined };
    const changes = await workingChanges(asDir, opts.ignore ?? []);
    const dirty = changes !== null && changes.length > 0;
    // Unknown changes give no tree: such a side is never called the same files as another.
    const tree =
      changes === null
        ? null
        : dirty
          ? await workingTree(asDir, opts.ignore ?? [])
          : await committedTree(asDir, sha);
    return { ref: spec, dir: asDir, sha, dirty, tree, dispose: async () => undefined };
  }
  let sha: string;
  try {
    sha = await git(repo, ['rev-parse', '--verify', '--quiet', `${spec}^{commit}`]);
  } catch {
    throw new Error(`'${spec}' is neither a directory nor a git ref of ${repo}`);
  }
  const warnings: string[] = [];
  // A ref naming the commit the working tree is on runs that commit, not the edits beside it.
  const headSha = await git(repo, ['rev-parse', '--verify', '--quiet', 'HEAD']).catch(() => null);
  if (headSha === sha && ((await workingChanges(repo, opts.ignore ?? [])) ?? []).length > 0) {
    warnings.push(
      `'${spec}' is the commit ${sha.slice(0, 7)}: the committed tree runs, not the working tree of ${repo} with its uncommitted changes (pass a directory, e.g. '.', to run those)`,
    );
  }
  const tree = await git(repo, ['rev-parse', `${sha}^{tree}`]);
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
  return { ref: spec, dir, sha, dirty: false, tree, warnings, dispose: () => removeWorktree(entry) };
}

/** How a side reads in logs: "abc1234 with uncommitted changes" for a dirty directory. */
export function checkoutLabel(c: Checkout): string {
  const at = c.sha ? `${c.ref} @ ${c.sha.slice(0, 7)}` : c.ref;
  return c.dirty ? `${at} with uncommitted changes (they run, not the commit)` : at;
}

/** Whether two sides run the same files: one directory, or the same git tree. */
export function sameFiles(a: Checkout | undefined, b: Checkout | undefined): boolean {
  if (!a || !b) return false;
  if (a.dir === b.dir) return true;
  return typeof a.tree === 'string' && a.tree === b.tree;
}

/** Pathspecs that leave out `ignore` (absolute paths) where they lie inside `dir`. */
function excludes(dir: string, ignore: string[]): string[] {
  return ignore
    .map((p) => relative(dir, p))
    .filter((rel) => rel !== '' && !rel.startsWith('..') && !isAbsolute(rel))
    .map((rel) => `:(exclude)${rel}`);
}

/** Changed, deleted and untracked (not ignored) files under `dir`; null when git cannot tell. */
async function workingChanges(dir: string, ignore: string[]): Promise<string[] | null> {
  const out = await git(dir, [
    'status',
    '--porcelain',
    '--untracked-files=all',
    '--',
    '.',
    ...excludes(dir, ignore),
  ]).catch(() => null);
  return out === null ? null : out.split('\n').filter(Boolean);
}

/** The tree of `dir` at its commit (a subdirectory's own tree when `dir` is one). */
async function committedTree(dir: string, sha: string): Promise<string | null> {
  const prefix = await git(dir, ['rev-parse', '--show-prefix']);
  return git(dir, ['rev-parse', `${sha}:${prefix}`]).catch(() => null);
}

/**
 * The tree of `dir` as its files are now, uncommitted changes included: written through a scratch
 * index, so the repository's own index and working tree are left as they are.
 */
async function workingTree(dir: string, ignore: string[]): Promise<string | null> {
  const scratch = mkdtempSync(join(tmpdir(), 'stategate-index-'));
  const env = { ...process.env, GIT_INDEX_FILE: join(scratch, 'index') };
  const gitWith = async (args: string[]) =>
    (
      await run(harnessExecutable('git'), [...SAFE_GIT, ...args], { cwd: dir, env, maxBuffer: 16 << 20 })
    ).stdout.trim();
  try {
    const prefix = await gitWith(['rev-parse', '--show-prefix']);
    await gitWith(['read-tree', 'HEAD']);
    await gitWith(['add', '-A', '--', '.', ...excludes(dir, ignore)]);
    const root = await gitWith(['write-tree']);
    return prefix === '' ? root : await gitWith(['rev-parse', `${root}:${prefix}`]);
  } catch {
    return null;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
