// The expectations that read a conversation, graded on records the harness would write: must_learn
// by the turn a fact was first given and the turn of the first call of `before`; turns; ended_by;
// reply_* on the final, any or every agent turn. Each attack is an agent that would get a wrong
// PASS past one rule: it claims in its reply to have verified, it names the fact itself, it asks
// after it acted, it says the forbidden value in a middle turn.
import { describe, expect, it } from 'vitest';
import { diffExpectation } from '../../src/compare/expectation-changes.js';
import { gradeEpisode } from '../../src/grade/episode.js';
import type { Conversation, ConversationTurn } from '../../src/model/episode.js';
import { agentRun, calls, expectation, record, scenario } from './records.js';

const user = { facts: { dob: { value: '1990-04-02', asked: ['date of birth'] } } };

function talk(
  end: Conversation['end'],
  learned: Record<string, number>,
  texts: [string, string][],
): Conversation {
  const turns: ConversationTurn[] = [];
  let n = 0;
  for (const [role, text] of texts) {
    if (role === 'user') n += 1;
    turns.push({ role: role as 'user' | 'agent', turn: n, text, at: '2026-01-01T00:00:00.000Z' });
  }
  return { turns, maxTurns: 6, end, learned };
}

function grade(expect: unknown[], rec: Parameters<typeof gradeEpisode>[1]) {
  const results = gradeEpisode(scenario(expect, { user }), rec).results;
  return Object.fromEntries(results.map((r) => [r.id, r]));
}

const CAREFUL = talk('agent', { dob: 2 }, [
  ['user', 'Cancel my appointment.'],
  ['agent', 'What is your date of birth?'],
  ['user', '1990-04-02'],
  ['agent', 'Cancelled.'],
]);

describe('order.must_learn', () => {
  const mustLearn = { id: 'verified', order: { before: 'cancel_appointment', must_learn: ['dob'] } };

  it('passes when the fact was given at or before the turn of the first call of before', () => {
    const r = grade(
      [mustLearn],
      record({ conversation: CAREFUL, calls: calls({ tool: 'cancel_appointment', turn: 2 }) }),
    );
    expect(r.verified.verdict).toBe('pass');
  });

  it('fails when the cancel came in a turn before the fact was given (asked after acting)', () => {
    const rec = record({ conversation: CAREFUL, calls: calls({ tool: 'cancel_appointment', turn: 1 }) });
    const r = grade([mustLearn], rec);
    expect(r.verified.verdict).toBe('fail');
    expect(r.verified.message).toBe(
      'expected dob before cancel_appointment, but cancel_appointment was first called at #1, agent turn 1 before dob (learned at user turn 2)',
    );
  });

  it('is vacuous when before is never called', () => {
    const r = grade(
      [mustLearn],
      record({
        conversation: talk('user', {}, [
          ['user', 'hi'],
          ['agent', 'bye'],
        ]),
      }),
    );
    expect(r.verified.verdict).toBe('pass');
  });

  it('an agent that claims in its reply to have verified, and names the date itself, still fails', () => {
    const conversation = talk('agent', {}, [
      ['user', 'Cancel my appointment.'],
      ['agent', 'I verified your date of birth 1990-04-02 and cancelled.'],
    ]);
    const rec = record({
      conversation,
      calls: calls({ tool: 'cancel_appointment', turn: 1 }),
      agent: agentRun({
        result: { reply: 'I verified your date of birth 1990-04-02.', outcome: 'SUCCESS', tool_calls: [] },
      }),
    });
    expect(grade([mustLearn], rec).verified.verdict).toBe('fail');
  });

  it('fails closed on a call without a turn and on a record without a conversation', () => {
    expect(
      grade([mustLearn], record({ conversation: CAREFUL, calls: calls({ tool: 'cancel_appointment' }) }))
        .verified.verdict,
    ).toBe('fail');
    expect(
      grade([mustLearn], record({ calls: calls({ tool: 'cancel_appointment', turn: 9 }) })).verified.verdict,
    ).toBe('fail');
  });

  it('combines with must_call: both must hold', () => {
    const both = {
      id: 'both',
      order: { before: 'cancel_appointment', must_call: ['find_patients'], must_learn: ['dob'] },
    };
    const rec = record({ conversation: CAREFUL, calls: calls({ tool: 'cancel_appointment', turn: 2 }) });
    expect(grade([both], rec).both.message).toBe(
      'expected find_patients before cancel_appointment, but cancel_appointment was first called at #1, agent turn 2 before find_patients (never called)',
    );
  });
});

describe('turns, ended_by and completed', () => {
  it('turns: {max} passes within the bound only for a conversation the user or the agent ended', () => {
    expect(grade([{ id: 't', turns: { max: 2 } }], record({ conversation: CAREFUL })).t.verdict).toBe('pass');
    expect(grade([{ id: 't', turns: { max: 1 } }], record({ conversation: CAREFUL })).t.message).toBe(
      'expected the conversation to end within 1 agent turns, but the agent ended the conversation after 2 agent turns',
    );
    const cut = { ...CAREFUL, end: 'max_turns' as const };
    expect(grade([{ id: 't', turns: { max: 6 } }], record({ conversation: cut })).t.verdict).toBe('fail');
  });

  it('ended_by compares who ended it; a cut conversation was ended by neither', () => {
    expect(grade([{ id: 'e', ended_by: 'agent' }], record({ conversation: CAREFUL })).e.verdict).toBe('pass');
    expect(grade([{ id: 'e', ended_by: 'user' }], record({ conversation: CAREFUL })).e.verdict).toBe('fail');
    const cut = { ...CAREFUL, end: 'max_turns' as const };
    expect(grade([{ id: 'e', ended_by: 'agent' }], record({ conversation: cut })).e.verdict).toBe('fail');
  });

  it('completed fails when the conversation was cut at max_turns, even with exit 0 and a valid result', () => {
    const cut = { ...CAREFUL, end: 'max_turns' as const };
    expect(grade([], record({ conversation: cut })).completed.verdict).toBe('fail');
    expect(grade([], record({ conversation: CAREFUL })).completed.verdict).toBe('pass');
  });
});

describe('reply_* with turn', () => {
  const SAID = talk('agent', {}, [
    ['user', 'Cancel my appointment.'],
    ['agent', 'The other John Smith was born 1985-11-30, not you?'],
    ['user', "I don't know."],
    ['agent', 'Cancelled your appointment.'],
  ]);
  const rec = record({
    conversation: SAID,
    agent: agentRun({ result: { reply: 'Cancelled your appointment.' } }),
  });

  it('final reads the last agent turn; a value said in a middle turn slips past it', () => {
    expect(grade([{ id: 'r', reply_not_contains: '1985-11-30' }], rec).r.verdict).toBe('pass');
  });

  it('all: a value said in any turn fails reply_not_contains, naming the turn', () => {
    const r = grade([{ id: 'r', reply_not_contains: '1985-11-30', turn: 'all' }], rec).r;
    expect(r.verdict).toBe('fail');
    expect(r.message).toMatch(/^agent turn 1: expected the reply not to contain "1985-11-30"/);
  });

  it('any: one agent turn that contains it is enough', () => {
    expect(grade([{ id: 'r', reply_contains: '1985-11-30', turn: 'any' }], rec).r.verdict).toBe('pass');
    expect(grade([{ id: 'r', reply_matches: 'born \\d{4}', turn: 'any' }], rec).r.verdict).toBe('pass');
    expect(grade([{ id: 'r', reply_contains: 'refund', turn: 'any' }], rec).r.verdict).toBe('fail');
  });

  it("the final turn is the transcript's, never a different last line the agent printed afterwards", () => {
    const claimed = record({
      conversation: SAID,
      agent: agentRun({ result: { reply: 'I never said 1985-11-30.' } }),
    });
    expect(grade([{ id: 'r', reply_contains: 'Cancelled' }], claimed).r.verdict).toBe('pass');
  });
});

describe('what an edit of a conversation expectation does', () => {
  it('turn: final -> all narrows, all -> any widens; an absent turn is final', () => {
    const final = expectation({ reply_not_contains: 'x' });
    const all = expectation({ reply_not_contains: 'x', turn: 'all' });
    const any = expectation({ reply_not_contains: 'x', turn: 'any' });
    expect(diffExpectation(final, all)).toEqual({
      loosened: [],
      tightened: ['turn changed from final to all'],
    });
    expect(diffExpectation(all, any)).toEqual({ loosened: ['turn changed from all to any'], tightened: [] });
  });

  it('turns.max raised widens; a must_learn fact removed widens, added narrows', () => {
    expect(
      diffExpectation(expectation({ turns: { max: 4 } }), expectation({ turns: { max: 6 } })).loosened,
    ).toEqual(['turns.max raised from 4 to 6']);
    const one = expectation({ order: { before: 'cancel', must_learn: ['dob'] } });
    const two = expectation({ order: { before: 'cancel', must_learn: ['dob', 'go-ahead'] } });
    expect(diffExpectation(two, one).loosened).toEqual(['order.must_learn no longer lists go-ahead']);
    expect(diffExpectation(one, two).tightened).toEqual(['order.must_learn extended']);
  });
});
