// `ended_by: user | agent`: who ended the conversation (a conversation cut at max_turns, or left by
// the agent, was ended by neither).
import { z } from 'zod';
import { endPhrase } from '../conversation.js';
import { defineKind } from '../kind.js';
import { EXACT } from '../params.js';
import { failed, passed } from '../verdicts.js';

export const endedBy = defineKind({
  key: 'ended_by',
  fields: { ended_by: z.enum(['user', 'agent']) },
  evidence: 'conversation',
  params: { ended_by: EXACT },
  grade: (e, record) => {
    const conversation = record.conversation;
    if (!conversation) return failed('WRONG_ENDING', 'the episode has no conversation', e.ended_by, null);
    if (conversation.end === e.ended_by) return passed(endPhrase(conversation), e.ended_by, conversation.end);
    return failed(
      'WRONG_ENDING',
      `expected the ${e.ended_by} to end the conversation, but ${endPhrase(conversation)}`,
      e.ended_by,
      conversation.end,
    );
  },
});
