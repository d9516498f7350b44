// One shell command in its own process group, with stdin, capped output, a timeout and
// cancellation. Everything that can go wrong comes back as a fact in the result.
import type { ChildProcess } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { OutputCapture } from './capture.js';
import type { CommandWrapper } from './namespace.js';
import { signalGroup, spawnInGroup, stopGroup } from './process-group.js';
import { within } from './within.js';

// A process that left the group (setsid) may still hold our pipes; stop waiting for them after this.
const PIPE_DRAIN_MS = 500;

/**
 * A conversation over the pipes (docs/agent-protocol.md): stdin gets `first` and stays open; each
 * complete stdout line goes to `onLine`, one at a time and in order, and what it returns is done:
 * a string is written to stdin, null closes stdin, undefined (a log line) does nothing.
 */
export interface Dialogue {
  first: string;
  onLine(line: string): Promise<string | null | undefined>;
  /** stdout closed: no turn can follow, so stdin is closed after it (the agent may then exit). */
  onClosed?(): void;
}

/** A stdout line longer than this is no turn (the capture still keeps what it keeps of it). */
const MAX_DIALOGUE_LINE = 1024 * 1024;

export interface GroupRunOptions {
  command: string;
  cwd: string;
  env: Record<string, string>;
  /** Written to stdin, then EOF; without it (and without `dialogue`) stdin is /dev/null. */
  stdin?: string;
  /** Instead of `stdin`: a conversation, stdin open until the dialogue closes it. */
  dialogue?: Dialogue;
  timeoutMs: number;
  graceMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  /** Send stderr into stdout, in order (setup logs); `stderr` is then the shell's own complaints. */
  mergeOutput?: boolean;
  /** Runs the command inside namespaces of its own (see namespace.ts); without it, a process group. */
  wrapper?: CommandWrapper;
}

export interface GroupRunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  stdout: OutputCapture;
  stderr: OutputCapture;
  /** Why the process could not be started, when it could not. */
  spawnError?: string;
}

/** Checks that cwd is a directory, for a message that names it (spawn would blame /bin/sh). */
export async function checkCwd(cwd: string): Promise<string | undefined> {
  try {
    if (!(await stat(cwd)).isDirectory()) return `working directory ${cwd} is not a directory`;
  } catch {
    return `working directory ${cwd} does not exist`;
  }
  return undefined;
}

function waitForExit(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null } | Error> {
  return new Promise((resolve) => {
    child.once('error', (err) => resolve(err));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

/**
 * The result a run fills in, with its output captures; `ready` is false when it must not start
 * (cancelled already, or a working directory that is not one), the result then saying why.
 * Shared by every way of running a command (process group, container).
 */
export async function beginRun(opts: GroupRunOptions): Promise<{ result: GroupRunResult; ready: boolean }> {
  const result: GroupRunResult = {
    exitCode: null,
    signal: null,
    timedOut: false,
    aborted: false,
    durationMs: 0,
    stdout: new OutputCapture(opts.maxOutputBytes),
    stderr: new OutputCapture(opts.maxOutputBytes),
  };
  if (opts.signal?.aborted) {
    result.aborted = true;
    result.spawnError = 'cancelled before it started';
    return { result, ready: false };
  }
  const cwdProblem = await checkCwd(opts.cwd);
  if (cwdProblem) {
    result.spawnError = cwdProblem;
    return { result, ready: false };
  }
  return { result, ready: true };
}

/** Runs `/bin/sh -c command` in its own process group and reports how it ended; never throws. */
export async function runInGroup(opts: GroupRunOptions): Promise<GroupRunResult> {
  const { result, ready } = await beginRun(opts);
  if (!ready) return result;
  const { stdout, stderr } = result;

  const started = performance.now();
  // One pipe for both streams keeps their true order; two pipes would be read in arbitrary order.
  const command = opts.mergeOutput ? `exec 2>&1\n${opts.command}` : opts.command;
  const child = spawnInGroup(
    command,
    opts.cwd,
    opts.env,
    [opts.stdin === undefined && !opts.dialogue ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    opts.wrapper,
  );
  const exited = waitForExit(child);
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const talk = opts.dialogue && child.stdin ? converse(opts.dialogue, child.stdin) : undefined;
  child.stdout?.once('end', () => talk?.closed());
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout.push(chunk);
    talk?.push(chunk);
  });
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  if (child.stdin) {
    // An agent that exits without reading its input closes the pipe: EPIPE is expected, not an error.
    child.stdin.on('error', () => {});
    if (!opts.dialogue) child.stdin.end(opts.stdin);
  }

  const pgid = child.pid;
  let killTimer: NodeJS.Timeout | undefined;
  const terminate = () => {
    if (pgid === undefined || killTimer) return;
    signalGroup(pgid, 'SIGTERM');
    killTimer = setTimeout(() => signalGroup(pgid, 'SIGKILL'), opts.graceMs);
  };
  const timer = setTimeout(() => {
    result.timedOut = true;
    terminate();
  }, opts.timeoutMs);
  const onAbort = () => {
    result.aborted = true;
    terminate();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  // Aborted while the working directory was being checked.
  if (opts.signal?.aborted) onAbort();

  const ended = await exited;
  result.durationMs = Math.round(performance.now() - started);
  clearTimeout(timer);
  opts.signal?.removeEventListener('abort', onAbort);
  if (ended instanceof Error) {
    result.spawnError = ended.message;
  } else {
    result.exitCode = ended.code;
    result.signal = ended.signal;
  }
  // Whatever the agent left behind dies with its group.
  if (pgid !== undefined) await stopGroup(pgid, opts.graceMs);
  clearTimeout(killTimer);
  await within(closed, PIPE_DRAIN_MS);
  // The lines read before the end are answered (or found to be logs) before the run reports.
  if (talk) await talk.settled();
  child.stdout?.destroy();
  child.stderr?.destroy();
  child.stdin?.destroy();
  return result;
}

/** Splits stdout into lines for a dialogue and answers them one at a time. */
function converse(
  dialogue: Dialogue,
  stdin: NodeJS.WritableStream,
): {
  push(chunk: Buffer): void;
  flush(): void;
  closed(): void;
  settled(): Promise<void>;
} {
  let pending = '';
  // A character split across two chunks is decoded whole.
  const decoder = new StringDecoder('utf8');
  let chain: Promise<void> = Promise.resolve();
  let open = true;
  const write = (text: string | null | undefined) => {
    if (!open || text === undefined) return;
    if (text === null) {
      open = false;
      stdin.end();
    } else stdin.write(text.endsWith('\n') ? text : `${text}\n`);
  };
  // A dialogue that fails closes stdin: the agent then ends as an agent whose input ended.
  const answer = (line: string) => dialogue.onLine(line).then(write, () => write(null));
  write(dialogue.first);
  return {
    push(chunk) {
      pending += decoder.write(chunk);
      let i = pending.indexOf('\n');
      while (i >= 0) {
        const line = pending.slice(0, i).replace(/\r$/, '');
        pending = pending.slice(i + 1);
        chain = chain.then(() => answer(line));
        i = pending.indexOf('\n');
      }
      // An endless line is no turn: drop it rather than hold it.
      if (pending.length > MAX_DIALOGUE_LINE) pending = '';
    },
    closed() {
      this.flush();
      chain = chain.then(() => {
        dialogue.onClosed?.();
        write(null);
      });
    },
    flush() {
      // A last line without a newline is still the agent's.
      if (pending.trim() !== '') {
        const line = pending;
        pending = '';
        chain = chain.then(() => answer(line));
      }
    },
    async settled() {
      this.flush();
      await chain;
    },
  };
}
