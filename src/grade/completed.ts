// The implicit critical expectation every episode has: the agent exited 0 within its timeout and
// printed a valid result, and in a conversation the conversation ended (the user or the agent ended
// it: not cut at max_turns, not left by the agent). It is no kind of the registry: no scenario writes it.
import { failed, type Grade, passed } from '../expectations/verdicts.js';
import type { AgentRun, Conversation } from '../model/episode.js';

/** Why a conversation did not end as the protocol ends one, or undefined when it did. */
function unfinished(conversation: Conversation | undefined): string | undefined {
  if (!conversation) return undefined;
  switch (conversation.end) {
    case 'user':
    case 'agent':
      return undefined;
    case 'max_turns':
      return `the conversation was cut at max_turns (${conversation.maxTurns} agent turns) before the user or the agent ended it`;
    case 'agent_left':
      return 'the agent closed stdout before the user or the agent ended the conversation (no reply line with done: true, no end from the user)';
    default:
      return undefined;
  }
}

/** The implicit critical expectation: the agent exited 0 within its timeout and printed a valid result. */
export function gradeCompleted(agent: AgentRun, conversation?: Conversation): Grade {
  const actual = { exitCode: agent.exitCode, signal: agent.signal, timedOut: agent.timedOut };
  const expected = 'exit 0 with a valid result';
  if (agent.timedOut) {
    const message = `the agent timed out after ${Math.round(agent.durationMs)} ms`;
    return failed('INCOMPLETE_RUN', message, expected, actual);
  }
  if (agent.exitCode !== 0) {
    const how = agent.signal
      ? `was killed by ${agent.signal}`
      : agent.exitCode === null
        ? 'did not run to an exit'
        : `exited with code ${agent.exitCode}`;
    const why = agent.resultError ? `: ${agent.resultError}` : '';
    return failed('INCOMPLETE_RUN', `expected the agent to exit 0, but it ${how}${why}`, expected, actual);
  }
  if (!agent.result || agent.resultError !== undefined) {
    const why = agent.resultError ?? 'no result line';
    return failed(
      'INCOMPLETE_RUN',
      `the agent exited 0 but printed no valid result: ${why}`,
      expected,
      actual,
    );
  }
  const cut = unfinished(conversation);
  if (cut)
    return failed('INCOMPLETE_RUN', cut, 'a conversation the user or the agent ended', conversation!.end);
  return passed('the agent exited 0 and printed a valid result', expected, actual);
}
