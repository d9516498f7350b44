// The agent.serve process: started in its own process group, output appended to a log file,
// health-checked by a TCP connection to agent.url's origin.
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { tryConnect } from './http-client.js';
import type { CommandWrapper } from './namespace.js';
import { spawnInGroup, stopGroup } from './process-group.js';
import { within } from './within.js';

const HEALTH_POLL_MS = 100;
const CONNECT_TIMEOUT_MS = 1000;
const LOG_TAIL_LINES = 20;
const LOG_TAIL_BYTES = 8192;

/** The agent server could not be started or reached; the message says why and shows its log. */
export class AgentStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AgentStartError';
  }
}

/** How a serve process ended. */
export interface ServeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when it could not be spawned at all. */
  error?: string;
}

/** "code 3", "signal SIGKILL" or the spawn error. */
export function describeExit(exit: ServeExit): string {
  if (exit.error) return exit.error;
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
}

/** Appends one harness line to the log, marked as ours. */
export function appendLog(logFile: string, line: string): void {
  appendFileSync(logFile, `[stategate ${new Date().toISOString()}] ${line}\n`);
}

/** The last lines of the log, for an error message. */
export function logTail(logFile: string): string {
  let text: string;
  try {
    const all = readFileSync(logFile);
    text = all.subarray(Math.max(0, all.length - LOG_TAIL_BYTES)).toString('utf8');
  } catch {
    return '(no log)';
  }
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  return lines.slice(-LOG_TAIL_LINES).join('\n');
}

/** One incarnation of the agent.serve process. */
export class ServeProcess {
  /** Set once the process has exited. */
  exit: ServeExit | null = null;
  /** Resolves when the process exits (or fails to spawn). */
  readonly exited: Promise<ServeExit>;
  private readonly child: ChildProcess;

  private constructor(
    private readonly logFile: string,
    private readonly graceMs: number,
    serve: string,
    cwd: string,
    env: Record<string, string>,
    wrapper?: CommandWrapper,
  ) {
    mkdirSync(dirname(logFile), { recursive: true });
    appendLog(logFile, `starting agent server: ${serve}`);
    const fd = openSync(logFile, 'a');
    try {
      this.child = spawnInGroup(serve, cwd, env, ['ignore', fd, fd], wrapper);
    } finally {
      // The child holds its own copy of the descriptor.
      closeSync(fd);
    }
    this.exited = new Promise((resolve) => {
      const done = (exit: ServeExit) => {
        if (this.exit) return;
        this.exit = exit;
        appendLog(logFile, `agent server exited (${describeExit(exit)})`);
        resolve(exit);
        // Whatever it started dies with it.
        if (this.child.pid !== undefined) void stopGroup(this.child.pid, this.graceMs);
      };
      this.child.once('error', (err) => done({ code: null, signal: null, error: err.message }));
      this.child.once('exit', (code, signal) => done({ code, signal }));
    });
  }

  /** Spawns `serve` with /bin/sh -c in cwd, appending its stdout and stderr to logFile. */
  static start(
    serve: string,
    cwd: string,
    env: Record<string, string>,
    logFile: string,
    graceMs: number,
    wrapper?: CommandWrapper,
  ): ServeProcess {
    return new ServeProcess(logFile, graceMs, serve, cwd, env, wrapper);
  }

  /** Polls until the URL's origin accepts a TCP connection; throws AgentStartError with the log tail. */
  async waitHealthy(url: URL, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.exit)
        throw this.startError(`exited (${describeExit(this.exit)}) before it accepted connections`, url);
      const error = await tryConnect(url, CONNECT_TIMEOUT_MS);
      // Checked again: another process may own the port our server failed to bind.
      if (this.exit)
        throw this.startError(`exited (${describeExit(this.exit)}) before it accepted connections`, url);
      if (error === null) return;
      if (Date.now() >= deadline) {
        await this.stop();
        throw this.startError(
          `did not accept connections within ${timeoutMs} ms (last attempt: ${error})`,
          url,
        );
      }
      await within(this.exited, HEALTH_POLL_MS);
    }
  }

  private startError(what: string, url: URL): AgentStartError {
    return new AgentStartError(
      `agent server ${what} at ${url.origin}; last lines of ${this.logFile}:\n${logTail(this.logFile)}`,
    );
  }

  /** Stops the whole process group (SIGTERM, then SIGKILL after the grace period). */
  async stop(): Promise<void> {
    if (this.child.pid !== undefined) await stopGroup(this.child.pid, this.graceMs);
    await within(this.exited, this.graceMs);
  }
}
