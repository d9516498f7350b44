// Where the repeats of one side part in a conversation: its turns walked with its calls, the fork
// named by its turn, whether it is a user's answer, a call, an agent's reply or the end.
import { describe, expect, it } from 'vitest';
import { explainFlaky } from '../../src/compare/flaky.js';
import type { CallRecord, Conversation, ConversationTurn } from '../../src/model/episode.js';
import { call, repeats, scenario } from './builders.js';

const s = scenario('cancel-appointment', [{ id: 'right-customer', critical: true }]);
const fail = {
  verdicts: { 'right-customer': 'fail' as const },
  labels: { 'right-customer': 'STATE_MISMATCH' as const },
};
const at = '2026-01-01T00:00:00.000Z';

function talk(
  turns: [ConversationTurn['role'], number, string, string[]?][],
  end: Conversation['end'] = 'agent',
) {
  return {
    turns: turns.map(([role, turn, text, facts]) => ({ role, turn, text, at, ...(facts ? { facts } : {}) })),
    maxTurns: 6,
    end,
    learned: {},
  };
}
const inTurn = (turn: number, c: CallRecord): CallRecord => ({ ...c, turn });
const find = () => inTurn(1, call('find_patients', { name: 'John Smith' }));
const cancel = (id: number) =>
  inTurn(2, call('cancel_appointment', { appointment_id: id }, { mutated: true }));
const opening: [ConversationTurn['role'], number, string][] = [
  ['user', 1, 'Cancel my appointment.'],
  ['agent', 1, 'What is your date of birth?'],
];

describe('explainFlaky in a conversation', () => {
  it('names the user turn where the repeats part', () => {
    const gave = talk([...opening, ['user', 2, '1990-04-02', ['dob']], ['agent', 2, 'Done.']]);
    const forgot = talk([...opening, ['user', 2, "I don't remember"], ['agent', 2, 'Sorry.']]);
    const episodes = repeats(s, 'head', [
      { calls: [find()], conversation: gave },
      { calls: [find()], conversation: forgot, ...fail },
      { calls: [find()], conversation: gave },
    ]);
    expect(explainFlaky(episodes)).toBe(
      'Repeats part at turn 2: after every repeat replied "What is your date of birth?", 2 of 3 repeats heard the user say "1990-04-02" (giving dob) and passed; the failing one heard the user say "I don\'t remember".',
    );
  });

  it('names a call of a later turn, with only the argument that differs', () => {
    const conversation = talk([...opening, ['user', 2, '1990-04-02', ['dob']], ['agent', 2, 'Done.']]);
    const episodes = repeats(s, 'head', [
      { calls: [find(), cancel(101)], conversation },
      { calls: [find(), cancel(102)], conversation, ...fail },
    ]);
    expect(explainFlaky(episodes)).toBe(
      'Repeats part at turn 2: after every repeat heard the user say "1990-04-02" (giving dob), 1 of 2 repeats called cancel_appointment(appointment_id=101) and got 200 (applied) and passed; the failing one called cancel_appointment(appointment_id=102) and got 200 (applied).',
    );
  });

  it("names the agent's reply and the end", () => {
    const asked = talk([...opening, ['user', 2, '1990-04-02', ['dob']], ['agent', 2, 'Done.']]);
    const rushed = talk([
      ['user', 1, 'Cancel my appointment.'],
      ['agent', 1, 'Cancelled.'],
    ]);
    expect(
      explainFlaky(
        repeats(s, 'head', [
          { calls: [find()], conversation: asked },
          { calls: [find()], conversation: rushed, ...fail },
        ]),
      ),
    ).toBe(
      'Repeats part at turn 1: after every repeat called find_patients(name="John Smith") and got 200, 1 of 2 repeats replied "What is your date of birth?" and passed; the failing one replied "Cancelled.".',
    );
    const cut = talk([...opening, ['user', 2, '1990-04-02', ['dob']], ['agent', 2, 'Done.']], 'max_turns');
    expect(
      explainFlaky(
        repeats(s, 'head', [
          { calls: [find()], conversation: asked },
          { calls: [find()], conversation: cut, ...fail },
        ]),
      ),
    ).toBe(
      'Repeats part at turn 2: after every repeat replied "Done.", 1 of 2 repeats ended (by the agent) and passed; the failing one ended (max turns).',
    );
  });

  it('says the conversations were the same when only the state tells the repeats apart', () => {
    const conversation = talk([...opening, ['user', 2, '1990-04-02', ['dob']], ['agent', 2, 'Done.']]);
    const episodes = repeats(s, 'head', [
      { calls: [find(), cancel(101)], conversation },
      { calls: [find(), cancel(101)], conversation, ...fail },
    ]);
    expect(explainFlaky(episodes)).toBe(
      'All 2 repeats made the same 2 calls in the same conversation, yet 1 failed; they failed right-customer (STATE_MISMATCH).',
    );
  });
});
