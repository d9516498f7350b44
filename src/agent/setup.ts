// agent.setup: run once per side before its first episode (docs/formats/stategate.md).
import { DEFAULT_MAX_OUTPUT_BYTES } from './capture.js';
import type { CommandWrapper } from './namespace.js';
import { DEFAULT_GRACE_MS } from './process-group.js';
import { type GroupRunOptions, type GroupRunResult, runInGroup } from './run-process.js';

export interface SetupResult {
  ok: boolean;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** stdout and stderr interleaved, capped (head and tail kept). */
  output: string;
  /** Why it failed, in one phrase ("exited with code 1", "timed out after 60000 ms"). */
  error?: string;
}

export interface SetupOptions {
  graceMs?: number;
  maxOutputBytes?: number;
  signal?: AbortSignal;
  /** Runs setup in namespaces of its own (see namespace.ts). */
  wrapper?: CommandWrapper;
  /** Runs the command some other way than as a local process group (agent.isolation: container). */
  runner?: (opts: GroupRunOptions) => Promise<GroupRunResult>;
}

/** Runs agent.setup with /bin/sh -c in cwd (stdin is /dev/null, so nothing waits for a prompt). */
export async function runSetup(
  command: string,
  cwd: string,
  env: Record<string, string>,
  timeoutMs: number,
  opts: SetupOptions = {},
): Promise<SetupResult> {
  const run = await (opts.runner ?? runInGroup)({
    command,
    cwd,
    env,
    timeoutMs,
    graceMs: opts.graceMs ?? DEFAULT_GRACE_MS,
    maxOutputBytes: opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    signal: opts.signal,
    mergeOutput: true,
    wrapper: opts.wrapper,
  });
  let error: string | undefined;
  if (run.spawnError !== undefined) error = `could not start: ${run.spawnError}`;
  else if (run.timedOut) error = `timed out after ${timeoutMs} ms`;
  else if (run.aborted) error = 'cancelled';
  else if (run.signal !== null) error = `killed by ${run.signal}`;
  else if (run.exitCode !== 0) error = `exited with code ${run.exitCode}`;
  return {
    ok: error === undefined,
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    output: run.stdout.text() + run.stderr.text(),
    ...(error === undefined ? {} : { error }),
  };
}
