// Agents run as `/bin/sh -c` in a process group of their own, so one signal reaches everything they
// started, and nothing they started outlives the episode.
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import type { CommandWrapper } from './namespace.js';

/** The default time between SIGTERM and SIGKILL. */
export const DEFAULT_GRACE_MS = 2000;
const POLL_MS = 25;
// After SIGKILL the kernel needs only moments; this bounds a wait on a process stuck in the kernel.
const KILL_WAIT_MS = 2000;

const liveGroups = new Set<number>();
// Groups whose processes the harness may not signal itself (a sandbox through sudo runs as another
// uid): their wrapper passes a signal on some other way.
const signallers = new Map<number, (signal: NodeJS.Signals) => void>();
let exitHookInstalled = false;

// A harness that exits (even on an uncaught error) takes its agents with it.
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
  });
}

/**
 * Starts `/bin/sh -c command` in cwd as the leader of a new process group; with a wrapper, the
 * wrapper's command (e.g. the same inside namespaces of its own) leads the group.
 */
export function spawnInGroup(
  command: string,
  cwd: string,
  env: Record<string, string>,
  stdio: StdioOptions,
  wrapper?: CommandWrapper,
): ChildProcess {
  installExitHook();
  const wrapped = wrapper?.wrap(command, env) ?? { file: '/bin/sh', args: ['-c', command] };
  const child =
    wrapped.child ??
    spawn(wrapped.file, wrapped.args, { cwd, env: wrapped.env ?? env, detached: true, stdio });
  // A sandbox started ahead has all three pipes: an ignored stdin is one that ends at once.
  if (wrapped.child && Array.isArray(stdio) && stdio[0] === 'ignore') child.stdin?.end();
  if (wrapped.done) {
    const done = wrapped.done;
    child.once('exit', () => done());
    child.once('error', () => done());
  }
  if (child.pid !== undefined) {
    const pgid = child.pid;
    liveGroups.add(pgid);
    if (wrapped.signal) signallers.set(pgid, wrapped.signal);
    child.once('exit', () => {
      signallers.delete(pgid);
      if (!groupRunning(pgid)) liveGroups.delete(pgid);
    });
  }
  return child;
}

/** Sends a signal to every process of the group; false when the group is gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  if (signal !== 0) signallers.get(pgid)?.(signal);
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    // EPERM: the group exists but a member is not ours to signal (it changed its user).
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Reads a process's state letter and process group from /proc; null when unknown. */
function procStat(pid: string): { state: string; pgid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name sits in parentheses and may itself contain ") ".
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], pgid: Number(fields[2]) };
  } catch {
    return null;
  }
}

/** Whether a process's state is one that runs anything: not a zombie, not dead. */
const runs = (state: string) => state !== 'Z' && state !== 'X';

/** Whether the process runs: not gone, and not a zombie its parent has not reaped yet. */
export function processRunning(pid: number): boolean {
  const stat = procStat(String(pid));
  return stat !== null && runs(stat.state);
}

/**
 * Whether any process of the group is still running. A killed orphan stays a zombie until init
 * reaps it, which can take a while in containers; a zombie runs nothing, so /proc is asked.
 */
export function groupRunning(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return true;
  }
  return pids.some((pid) => {
    const stat = procStat(pid);
    return stat !== null && stat.pgid === pgid && runs(stat.state);
  });
}

/**
 * Waits until no process of the group runs, up to `timeoutMs`; true when the group is gone. The
 * polls start at 1 ms and double up to POLL_MS: a group that is only finishing its exit (a
 * sandbox's PID 1 taking its namespaces down after the agent's result is in) is gone within a few
 * milliseconds, and each episode would otherwise wait a whole poll for it.
 */
export async function waitGroupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let wait = 1;
  while (groupRunning(pgid)) {
    if (Date.now() >= deadline) return false;
    await delay(wait);
    wait = Math.min(wait * 2, POLL_MS);
  }
  return true;
}

/** SIGTERM to the group, SIGKILL after `graceMs` if anything still runs; resolves once all are gone. */
export async function stopGroup(pgid: number, graceMs: number): Promise<void> {
  if (groupRunning(pgid)) {
    signalGroup(pgid, 'SIGTERM');
    if (!(await waitGroupGone(pgid, graceMs))) {
      signalGroup(pgid, 'SIGKILL');
      await waitGroupGone(pgid, KILL_WAIT_MS);
    }
  }
  if (!groupRunning(pgid)) liveGroups.delete(pgid);
}
