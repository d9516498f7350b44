// The command adapter (docs/agent-protocol.md): one process per episode, input on stdin, the result on
// the last line of stdout.
import type { AgentRun } from '../model/episode.js';
import { DEFAULT_MAX_OUTPUT_BYTES } from './capture.js';
import type { CommandWrapper } from './namespace.js';
import { DEFAULT_GRACE_MS } from './process-group.js';
import { readResultLine } from './result.js';
import { type GroupRunOptions, type GroupRunResult, runInGroup } from './run-process.js';
import type { AgentInput } from './types.js';

export interface CommandAgentOptions {
  /** agent.command, run with /bin/sh -c. */
  command: string;
  /** The side's checkout. */
  cwd: string;
  /** From buildAgentEnv: the whole environment, nothing is inherited. */
  env: Record<string, string>;
  input: AgentInput;
  timeoutMs: number;
  /** Between SIGTERM and SIGKILL (default 2 s). */
  graceMs?: number;
  /** Per stream (default 1 MiB); the head and the tail are kept. */
  maxOutputBytes?: number;
  signal?: AbortSignal;
  /** Runs the agent in namespaces of its own (see namespace.ts). */
  wrapper?: CommandWrapper;
  /** Runs the command some other way than as a local process group (agent.isolation: container). */
  runner?: (opts: GroupRunOptions) => Promise<GroupRunResult>;
}

/** Runs one episode of a command agent; a crash, hang or garbage is an AgentRun, never a throw. */
export async function runCommandAgent(opts: CommandAgentOptions): Promise<AgentRun> {
  const run = await (opts.runner ?? runInGroup)({
    command: opts.command,
    cwd: opts.cwd,
    env: opts.env,
    stdin: `${JSON.stringify(opts.input)}\n`,
    timeoutMs: opts.timeoutMs,
    graceMs: opts.graceMs ?? DEFAULT_GRACE_MS,
    maxOutputBytes: opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    signal: opts.signal,
    wrapper: opts.wrapper,
  });
  const agentRun: AgentRun = {
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    durationMs: run.durationMs,
    stdout: run.stdout.text(),
    stderr: run.stderr.text(),
    truncated: run.stdout.truncated || run.stderr.truncated,
  };
  if (run.spawnError !== undefined) {
    agentRun.resultError = `the agent could not be started: ${run.spawnError}`;
    return agentRun;
  }
  const reading = readResultLine(run.stdout);
  if (reading.result) agentRun.result = reading.result;
  else
    agentRun.resultError = run.aborted
      ? `the run was cancelled; ${reading.resultError}`
      : reading.resultError;
  return agentRun;
}
