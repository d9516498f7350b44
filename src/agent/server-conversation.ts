// A conversation with an agent server (docs/agent-protocol.md): one POST per agent turn, the body
// the episode's plus `conversation: {id, turn, max_turns, history}`, the response that turn's
// result. The episode's timeout covers every turn together; a turn that fails (no answer, not 2xx,
// no valid result) ends the conversation as the agent's doing.
import type { ConversationDriver } from '../conversation/driver.js';
import type { AgentRun } from '../model/episode.js';

/** POSTs one turn's body with what is left of the episode's time. */
export type PostTurn = (body: Record<string, unknown>, timeoutMs: number) => Promise<AgentRun>;

/** Whether a response body says `done: true` (the result schema keeps no such field). */
function saysDone(body: string): boolean {
  try {
    const value = JSON.parse(body) as { done?: unknown } | null;
    return typeof value === 'object' && value !== null && value.done === true;
  } catch {
    return false;
  }
}

/** Runs the whole conversation; the last turn's result is the episode's. */
export async function converseOverHttp(
  request: { input: { message: string }; vars: { episode: string }; timeoutMs: number },
  driver: ConversationDriver,
  body: Record<string, unknown>,
  post: PostTurn,
): Promise<AgentRun> {
  const started = performance.now();
  let next: { message: string; turn: number } | null = driver.open(request.input.message);
  let history: { role: 'user' | 'agent'; text: string }[] = [];
  let last: AgentRun | undefined;
  let stdout = '';
  while (next) {
    const left = request.timeoutMs - (performance.now() - started);
    if (left <= 0) {
      driver.end('timeout', `the agent did not finish within ${request.timeoutMs} ms`);
      break;
    }
    const conversation = { id: request.vars.episode, turn: next.turn, max_turns: driver.maxTurns, history };
    const run = await post({ ...body, message: next.message, conversation }, Math.ceil(left));
    stdout += `${run.stdout}\n`;
    last = run;
    if (!run.result) {
      driver.end(
        run.timedOut ? 'timeout' : 'agent_left',
        `agent turn ${next.turn}: ${run.resultError ?? 'no result'}`,
      );
      break;
    }
    history = [...history, { role: 'user', text: next.message }, { role: 'agent', text: run.result.reply }];
    next = await driver.agentTurn({ reply: run.result.reply, done: saysDone(run.stdout) });
  }
  const durationMs = Math.round(performance.now() - started);
  if (!last) {
    return {
      exitCode: null,
      signal: null,
      timedOut: true,
      durationMs,
      stdout: '',
      stderr: '',
      truncated: false,
      resultError: `the agent did not finish within ${request.timeoutMs} ms`,
    };
  }
  return { ...last, durationMs, stdout: stdout.trimEnd() };
}
