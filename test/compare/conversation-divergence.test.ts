// Where two conversations part: calls and agent turns interleaved as they happened, walked in
// lockstep, the first difference named on both sides from the records (never from the agent's claims).
import { describe, expect, it } from 'vitest';
import { firstConversationDivergence } from '../../src/compare/conversation-divergence.js';
import type { Conversation, ConversationTurn } from '../../src/model/episode.js';
import { calls } from '../grade/records.js';

const at = '2026-01-01T00:00:00.000Z';
function talk(
  end: Conversation['end'],
  turns: [ConversationTurn['role'], number, string, string[]?][],
): Conversation {
  return {
    turns: turns.map(([role, turn, text, facts]) => ({ role, turn, text, at, ...(facts ? { facts } : {}) })),
    maxTurns: 6,
    end,
    learned: {},
  };
}

describe('firstConversationDivergence', () => {
  const careful = {
    calls: calls({ tool: 'find_patients', args: { name: 'John Smith' }, turn: 1 }),
    conversation: talk('agent', [
      ['user', 1, 'Cancel please.'],
      ['agent', 1, 'What is your date of birth?'],
      ['user', 2, '1990-04-02', ['dob']],
      ['agent', 2, 'Done.'],
    ]),
  };

  it('names the turn, what the base asked for, and the call the head made instead', () => {
    const hasty = {
      calls: calls(
        { tool: 'find_patients', args: { name: 'John Smith' }, turn: 1 },
        { tool: 'cancel_appointment', args: { appointment_id: 101 }, turn: 1 },
      ),
      conversation: talk('agent', [
        ['user', 1, 'Cancel please.'],
        ['agent', 1, 'Cancelled.'],
      ]),
    };
    expect(firstConversationDivergence(careful, hasty)).toEqual({
      kind: 'different-turn',
      step: 2,
      sentence:
        'At turn 1 the base asked for dob ("What is your date of birth?"); the head called cancel_appointment(appointment_id=101).',
    });
  });

  it('says what each side said when both replied differently, and how each ended', () => {
    const other = {
      calls: careful.calls,
      conversation: talk('max_turns', [
        ['user', 1, 'Cancel please.'],
        ['agent', 1, 'Hello?'],
      ]),
    };
    expect(firstConversationDivergence(careful, other).sentence).toBe(
      'At turn 1 the base asked for dob ("What is your date of birth?"); the head said "Hello?".',
    );
    expect(firstConversationDivergence(careful, careful)).toEqual({
      kind: 'same',
      step: 0,
      sentence: 'Both conversations went the same way (2 agent turns).',
    });
  });
});
