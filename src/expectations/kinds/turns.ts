// `turns: {max: n}`: the user or the agent ended the conversation within n agent turns.
import { z } from 'zod';
import { agentTurnCount, endPhrase } from '../conversation.js';
import { defineKind } from '../kind.js';
import { AT_MOST, fields } from '../params.js';
import { failed, passed } from '../verdicts.js';

export const turns = defineKind({
  key: 'turns',
  fields: { turns: z.strictObject({ max: z.number().int().min(1) }) },
  evidence: 'conversation',
  params: { turns: fields({ max: AT_MOST }) },
  grade: (e, record) => {
    const conversation = record.conversation;
    if (!conversation) return failed('TOO_MANY_TURNS', 'the episode has no conversation', e.turns.max, null);
    const n = agentTurnCount(conversation);
    const ended = conversation.end === 'user' || conversation.end === 'agent';
    if (ended && n <= e.turns.max)
      return passed(`${endPhrase(conversation)}, within ${e.turns.max}`, e.turns.max, n);
    return failed(
      'TOO_MANY_TURNS',
      `expected the conversation to end within ${e.turns.max} agent turns, but ${endPhrase(conversation)}`,
      e.turns.max,
      n,
    );
  },
});
