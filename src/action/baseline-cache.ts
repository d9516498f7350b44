// The action's baseline cache: @actions/cache carries between runs the local directory that
// `compare --cache` reads and writes (the same code path as the CLI). Only a run the base repository
// controls restores or saves, under a key prefix that says so; what it saves is exactly the entry
// this process wrote, checked byte for byte, never whatever else an agent may have left in the folder.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import * as cache from '@actions/cache';
import type { BaselineStored } from '../run/api.js';
import { SAFE_GIT } from '../run/checkout.js';
import { harnessExecutable, withHarnessPath } from '../sandbox/harness-path.js';
import type { EventContext } from './event.js';
import type { Say } from './posting.js';
import { type ReportsFrom, untrustedReason } from './trust.js';

const run = promisify(execFile);

/** Where the cache lives on the runner and under which keys it is restored and saved. */
export interface CachePlan {
  dir: string;
  /** This run's key (unique: entries of the Actions cache are immutable). */
  key: string;
  /** The prefix a restore matches: the newest entry of a trusted run on the same base tree. */
  restoreKeys: string[];
}

/**
 * Why this run may not use the baseline cache, or null when it may. A fork's pull_request run
 * executes the fork's workflow: it may neither read the base's episodes nor write any.
 */
export function cacheRefusal(event: EventContext, reportsFrom: ReportsFrom): string | null {
  const untrusted = untrustedReason(event, reportsFrom, false);
  if (untrusted) return untrusted;
  if (event.name === 'pull_request' && event.pullRequest?.fork)
    return `the pull request comes from the fork ${event.headRepository ?? '(unknown)'}, whose workflow runs this step`;
  return null;
}

/**
 * Why this run may read the cache but not write it, or null when it may write. A pull_request_target
 * run of a fork's pull request is the base's workflow, but the fork's agent ran on this machine
 * beside the base's episodes, and its entries would be restored by every pull request on that base
 * (the cache scope of pull_request_target is the base branch): what it stored is not saved.
 */
export function cacheSaveRefusal(event: EventContext): string | null {
  if (event.name === 'pull_request_target' && event.pullRequest?.fork)
    return `the pull request comes from the fork ${event.headRepository ?? '(unknown)'}, whose agent ran in this job`;
  return null;
}

/** The plan of a trusted run: the key names trust, the stategate version, the base tree and the shard. */
export function cachePlan(opts: {
  runnerTemp: string;
  version: string;
  baseTree: string;
  shard: { index: number; total: number } | null;
  runId: string;
  runAttempt: string;
}): CachePlan {
  const shard = opts.shard && opts.shard.total > 1 ? `-shard${opts.shard.index}of${opts.shard.total}` : '';
  const prefix = `stategate-baseline-trusted-${opts.version}-${opts.baseTree}${shard}-`;
  return {
    dir: join(opts.runnerTemp, 'stategate-baseline-cache'),
    key: `${prefix}${opts.runId}-${opts.runAttempt}`,
    restoreKeys: [prefix],
  };
}

/** The git tree of a commit in the workspace's repository. */
export async function treeOf(workspace: string, sha: string): Promise<string> {
  const { stdout } = await run(harnessExecutable('git'), [...SAFE_GIT, 'rev-parse', `${sha}^{tree}`], {
    cwd: workspace,
  });
  return stdout.trim();
}

/** Restores the newest trusted entry for the plan's prefix; an unavailable service or a failure runs the base in full. */
export async function restoreBaseline(plan: CachePlan, say: Say): Promise<void> {
  mkdirSync(plan.dir, { recursive: true });
  if (!cache.isFeatureAvailable()) {
    say.info(
      `cache: the Actions cache service is not available to this step; the base's episodes are kept in ${plan.dir} for this job only`,
    );
    return;
  }
  try {
    // tar and zstd are looked up on PATH: only where no agent can have put its own.
    const hit = await withHarnessPath(() => cache.restoreCache([plan.dir], plan.key, plan.restoreKeys));
    say.info(hit ? `cache: restored ${hit}` : `cache: nothing saved yet under ${plan.restoreKeys[0]}`);
  } catch (err) {
    say.warning(`cache: could not restore (${(err as Error).message}); the base runs in full`);
  }
}

/**
 * Saves the entry the run stored: the folder is emptied and only that entry, checked against the
 * hash of what was written, goes back in. A changed entry is not saved.
 */
export async function saveBaseline(plan: CachePlan, stored: BaselineStored, say: Say): Promise<void> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(stored.file);
  } catch (err) {
    say.warning(`cache: the stored entry cannot be read back (${(err as Error).message}); nothing saved`);
    return;
  }
  if (createHash('sha256').update(bytes).digest('hex') !== stored.sha256) {
    say.warning(`cache: ${stored.file} changed after stategate wrote it; nothing saved`);
    return;
  }
  rmSync(plan.dir, { recursive: true, force: true });
  mkdirSync(plan.dir, { recursive: true });
  writeFileSync(join(plan.dir, basename(stored.file)), bytes);
  if (!cache.isFeatureAvailable()) return;
  try {
    // saveCache reports a refused or failed upload by returning -1 (after its own warning), not by throwing.
    const id = await withHarnessPath(() => cache.saveCache([plan.dir], plan.key));
    if (id === -1) say.warning(`cache: ${plan.key} was not saved; the next run runs the base again`);
    else say.info(`cache: saved the base's episodes as ${plan.key}`);
  } catch (err) {
    say.warning(`cache: could not save (${(err as Error).message}); the next run runs the base again`);
  }
}
