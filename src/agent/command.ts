// The command adapter (docs/agent-protocol.md): one process per episode, input on stdin, the result on
// the last line of stdout.
import type { ConversationDriver } from '../conversation/driver.js';
import type { AgentRun } from '../model/episode.js';
import { DEFAULT_MAX_OUTPUT_BYTES } from './capture.js';
import type { CommandWrapper } from './namespace.js';
import { DEFAULT_GRACE_MS } from './process-group.js';
import { readResultLine } from './result.js';
import { type Dialogue, type GroupRunOptions, type GroupRunResult, runInGroup } from './run-process.js';
import { readTurnLine, type TurnLine } from './turn-line.js';
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
  /** A conversation scenario: stdin stays open and the driver answers each agent turn. */
  conversation?: ConversationDriver;
}

/** Runs one episode of a command agent; a crash, hang or garbage is an AgentRun, never a throw. */
export async function runCommandAgent(opts: CommandAgentOptions): Promise<AgentRun> {
  const talk = opts.conversation ? dialogueWith(opts.conversation, opts.input) : undefined;
  const run = await (opts.runner ?? runInGroup)({
    command: opts.command,
    cwd: opts.cwd,
    env: opts.env,
    ...(talk ? { dialogue: talk.dialogue } : { stdin: `${JSON.stringify(opts.input)}\n` }),
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
  if (talk && opts.conversation) {
    const driver = opts.conversation;
    if (run.timedOut) driver.end('timeout', `the agent did not finish within ${opts.timeoutMs} ms`);
    else driver.end('agent_left', 'the agent closed stdout before the conversation ended');
  }
  const reading = talk ? talk.result() : readResultLine(run.stdout);
  if (reading.result) agentRun.result = reading.result;
  else
    agentRun.resultError = run.aborted
      ? `the run was cancelled; ${reading.resultError}`
      : reading.resultError;
  return agentRun;
}

/**
 * The conversation over stdin and stdout: the first line is the input with `conversation: {turn:
 * 1, max_turns}`; each reply line is a turn the driver answers; the last reply line is the result.
 */
function dialogueWith(
  driver: ConversationDriver,
  input: AgentInput,
): { dialogue: Dialogue; result(): TurnLine['reading'] } {
  let last: TurnLine | undefined;
  driver.open(input.message);
  const first = { ...input, conversation: { turn: 1, max_turns: driver.maxTurns } };
  return {
    dialogue: {
      first: JSON.stringify(first),
      onLine: async (line) => {
        const turn = readTurnLine(line);
        if (!turn) return undefined;
        last = turn;
        // After the end a reply line is the result only: no turn the user heard.
        if (driver.over) return undefined;
        const next = await driver.agentTurn({ reply: turn.reply, done: turn.done });
        return next ? JSON.stringify(next) : null;
      },
    },
    result: () => last?.reading ?? { resultError: 'stdout has no reply line: the agent printed no result' },
  };
}
