// Who made a database or role: kept in its COMMENT, so a later run (on any machine sharing the
// server) can tell leftovers of a dead run from the databases of a live one.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** The bookkeeping a database or role comment carries. */
export interface Owner {
  stategate: 1;
  pid: number;
  host: string;
  /** The process start time as the kernel reports it (Linux), to tell a reused pid apart. */
  pidStart: string | null;
  created: string;
  label?: string;
}

/** The start time of a process in clock ticks since boot (Linux /proc), or null where there is no /proc. */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; starttime is field 22 overall.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** This process's own start time, read once: every database a run makes is commented with it. */
let ownStart: string | null | undefined;

/** The comment for something this process creates now. */
export function ownerComment(label?: string): string {
  ownStart ??= processStart(process.pid);
  const owner: Owner = {
    stategate: 1,
    pid: process.pid,
    host: hostname(),
    pidStart: ownStart,
    created: new Date().toISOString(),
    ...(label ? { label } : {}),
  };
  return JSON.stringify(owner);
}

/** Reads a comment written by ownerComment; null for anything else. */
export function parseOwner(comment: string | null): Owner | null {
  if (!comment) return null;
  try {
    const o = JSON.parse(comment) as Owner;
    return o && o.stategate === 1 && typeof o.pid === 'number' ? o : null;
  } catch {
    return null;
  }
}

/** Whether the process that owns it is known to be gone: same host, and no process with that pid and start time. */
export function ownerGone(owner: Owner): boolean {
  if (owner.host !== hostname()) return false;
  if (owner.pidStart !== null) {
    const now = processStart(owner.pid);
    if (now !== null) return now !== owner.pidStart;
  }
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
