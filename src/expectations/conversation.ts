// Reading the transcript the harness wrote (record.conversation), for the kinds graded on a
// conversation. What the agent says about its own conversation is never read.
import type { Conversation, EpisodeRecord } from '../model/episode.js';

/** The agent turns' texts, in order: the transcript's in a conversation, else the one reply. */
export function agentTexts(record: EpisodeRecord): string[] | undefined {
  if (record.conversation)
    return record.conversation.turns.filter((t) => t.role === 'agent').map((t) => t.text);
  const reply = record.agent.result?.reply;
  return typeof reply === 'string' ? [reply] : undefined;
}

/** How many turns the agent took. */
export function agentTurnCount(conversation: Conversation): number {
  return conversation.turns.filter((t) => t.role === 'agent').length;
}

/** How a conversation's end reads in a message. */
export function endPhrase(conversation: Conversation): string {
  const turns = agentTurnCount(conversation);
  const after = `after ${turns} agent turn${turns === 1 ? '' : 's'}`;
  switch (conversation.end) {
    case 'user':
      return `the user ended the conversation ${after}`;
    case 'agent':
      return `the agent ended the conversation ${after}`;
    case 'max_turns':
      return `the conversation was cut at max_turns (${conversation.maxTurns}) ${after}`;
    case 'agent_left':
      return `the agent left the conversation ${after} without ending it`;
    case 'timeout':
      return `the agent timed out ${after}`;
    case 'simulator_error':
      return `the user simulator failed ${after}`;
  }
}
