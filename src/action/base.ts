// The base side: the commit to compare against, fetched into the clone when a shallow checkout lacks it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SAFE_GIT } from '../run/checkout.js';
import { harnessExecutable } from '../sandbox/harness-path.js';

const exec = promisify(execFile);

/** The base commit, where it came from, and whether it had to be fetched. */
export interface BaseCommit {
  sha: string;
  source: 'event' | 'base-ref';
  fetched: boolean;
}

/** Thrown when the base cannot be found locally nor fetched from origin. */
export class BaseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BaseError';
  }
}

/**
 * Resolves the base to a commit present in the clone at `cwd`: base-ref when given, else the event's
 * base SHA; null when there is neither (the head then runs alone).
 */
export async function resolveBase(
  opts: { baseRef: string | null; eventBaseSha: string | null },
  cwd: string,
): Promise<BaseCommit | null> {
  if (opts.baseRef !== null) {
    const local = await revParse(opts.baseRef, cwd);
    if (local) return { sha: local, source: 'base-ref', fetched: false };
    await fetchOrigin(opts.baseRef, cwd);
    const fetched = await revParse('FETCH_HEAD', cwd);
    if (!fetched) throw new BaseError(`base-ref ${opts.baseRef}: fetched, yet FETCH_HEAD is not a commit`);
    return { sha: fetched, source: 'base-ref', fetched: true };
  }
  if (opts.eventBaseSha !== null) {
    const fetched = await ensureCommit(opts.eventBaseSha, cwd);
    return { sha: opts.eventBaseSha, source: 'event', fetched };
  }
  return null;
}

/** Makes sure a commit is in the clone, fetching it from origin when missing; returns whether it fetched. */
export async function ensureCommit(sha: string, cwd: string): Promise<boolean> {
  if (await hasCommit(sha, cwd)) return false;
  await fetchOrigin(sha, cwd);
  if (!(await hasCommit(sha, cwd))) {
    throw new BaseError(`the base commit ${sha} is still missing after git fetch --depth=1 origin ${sha}`);
  }
  return true;
}

async function hasCommit(sha: string, cwd: string): Promise<boolean> {
  try {
    await exec(harnessExecutable('git'), [...SAFE_GIT, 'cat-file', '-e', `${sha}^{commit}`], { cwd });
    return true;
  } catch {
    return false;
  }
}

async function revParse(ref: string, cwd: string): Promise<string | null> {
  try {
    const { stdout } = await exec(
      harnessExecutable('git'),
      [...SAFE_GIT, 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`],
      { cwd },
    );
    return stdout.trim() || null;
  } catch {
    return null;
  }
}

async function fetchOrigin(ref: string, cwd: string): Promise<void> {
  try {
    // `--` keeps a ref that starts with a dash from being read as an option.
    await exec(
      harnessExecutable('git'),
      [...SAFE_GIT, 'fetch', '--no-tags', '--depth=1', 'origin', '--', ref],
      { cwd },
    );
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new BaseError(
      `the base ${ref} is not in this clone and git fetch --depth=1 origin ${ref} failed: ${stderr || (err as Error).message}`,
    );
  }
}
