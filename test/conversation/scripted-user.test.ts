// The scripted user's rules, one by one, in the order the scenario format gives them: the agent's
// end first, then asked facts (joined in `facts` order), then `say`, then `unknown` on a question,
// else the user ends. Matching is case-insensitive on word boundaries; `/.../` is an RE2 pattern.
import { describe, expect, it } from 'vitest';
import { UserSpec } from '../../src/config/schema.js';
import { ConversationDriver, scriptedPlayer } from '../../src/conversation/driver.js';
import { ScriptedUser } from '../../src/conversation/scripted-user.js';

const spec = UserSpec.parse({
  facts: {
    dob: { value: '1990-04-02', asked: ['date of birth', 'birth date', 'born', 'dob'] },
    which: {
      value: 'the Tuesday one',
      asked: ['which appointment', 'which one'],
      reply: 'The one on Tuesday.',
    },
    'go-ahead': { value: 'yes', asked: ['/\\b(confirm|proceed)\\b/'], reply: 'Yes, go ahead.' },
  },
  say: [],
});
const turn = (reply: string, done = false) => ({ reply, done });

describe('the scripted user', () => {
  it('rule 1: an agent turn with done: true ends the conversation, whatever it asks', () => {
    const user = new ScriptedUser(spec);
    expect(user.answer(turn('What is your date of birth?', true))).toEqual({ end: 'agent' });
  });

  it('rule 2: gives a fact whose phrase occurs in the turn, case-insensitively, as its value by default', () => {
    const user = new ScriptedUser(spec);
    expect(user.answer(turn('Could you tell me your Date Of Birth, please?'))).toEqual({
      text: '1990-04-02',
      facts: ['dob'],
    });
  });

  it('rule 2: matches on word boundaries only ("reborn" does not ask for "born", "dobby" not for "dob")', () => {
    const user = new ScriptedUser(spec);
    expect(user.answer(turn('Our reborn booking system, Dobby, is ready.'))).toEqual({ end: 'user' });
  });

  it('rule 2: whitespace inside a phrase matches any run of whitespace, and punctuation is a boundary', () => {
    const user = new ScriptedUser(spec);
    expect(user.answer(turn('Your date\n  of birth?'))).toMatchObject({ facts: ['dob'] });
    expect(new ScriptedUser(spec).answer(turn('(dob)'))).toMatchObject({ facts: ['dob'] });
  });

  it('rule 2: several facts asked at once are joined in facts order, not in the order asked', () => {
    const user = new ScriptedUser(spec);
    const answer = user.answer(turn('Which appointment, and what is your DOB?'));
    expect(answer).toEqual({ text: '1990-04-02 The one on Tuesday.', facts: ['dob', 'which'] });
  });

  it('rule 2: a /.../ entry is a regular expression, matched case-insensitively', () => {
    const user = new ScriptedUser(spec);
    expect(user.answer(turn('Shall I PROCEED with the cancellation?'))).toEqual({
      text: 'Yes, go ahead.',
      facts: ['go-ahead'],
    });
    expect(new ScriptedUser(spec).answer(turn('I will proceeds.'))).toEqual({ end: 'user' });
  });

  it('rule 2: a fact asked again is given again', () => {
    const user = new ScriptedUser(spec);
    expect(user.answer(turn('dob?'))).toMatchObject({ facts: ['dob'] });
    expect(user.answer(turn('Sorry, your dob again?'))).toMatchObject({ facts: ['dob'] });
  });

  it('rule 3: with no fact asked, the next unused say turn, in order, before unknown', () => {
    const user = new ScriptedUser({ ...spec, say: ['First.', 'Second.'] });
    expect(user.answer(turn('How can I help?'))).toEqual({ text: 'First.', facts: [] });
    expect(user.answer(turn('Anything else?'))).toEqual({ text: 'Second.', facts: [] });
    expect(user.answer(turn('And?'))).toEqual({ text: "I don't know.", facts: [] });
  });

  it('rule 4: a question asking for no fact gets unknown', () => {
    const user = new ScriptedUser({ ...spec, unknown: 'No idea.' });
    expect(user.answer(turn('What is your favourite colour?'))).toEqual({ text: 'No idea.', facts: [] });
  });

  it('rule 5: a statement asking for nothing ends the conversation', () => {
    const user = new ScriptedUser(spec);
    expect(user.answer(turn('Your appointment is cancelled.'))).toEqual({ end: 'user' });
  });

  it('an agent that names the value itself without asking learns nothing from the user', () => {
    // The agent guesses the date: no asked phrase, so the user gives nothing and ends.
    const user = new ScriptedUser(spec);
    expect(user.answer(turn('I have 1990-04-02 on file, cancelling now.'))).toEqual({ end: 'user' });
  });
});

describe('the conversation driver', () => {
  const fixedClock = () => new Date('2026-01-01T00:00:00Z');

  it('numbers the turns, records the facts each user turn gave, and learns a fact at its first giving', async () => {
    const driver = new ConversationDriver(scriptedPlayer(new ScriptedUser(spec)), 10, fixedClock);
    expect(driver.open('Cancel my appointment')).toEqual({ message: 'Cancel my appointment', turn: 1 });
    expect(driver.turn).toBe(1);
    expect(await driver.agentTurn(turn('What is your date of birth?'))).toEqual({
      message: '1990-04-02',
      turn: 2,
    });
    expect(driver.turn).toBe(2);
    expect(await driver.agentTurn(turn('And your dob once more?'))).toEqual({
      message: '1990-04-02',
      turn: 3,
    });
    expect(await driver.agentTurn(turn('Done.', true))).toBeNull();
    const record = driver.record();
    expect(record.end).toBe('agent');
    expect(record.learned).toEqual({ dob: 2 });
    expect(record.turns.map((t) => [t.role, t.turn, t.facts])).toEqual([
      ['user', 1, []],
      ['agent', 1, undefined],
      ['user', 2, ['dob']],
      ['agent', 2, undefined],
      ['user', 3, ['dob']],
      ['agent', 3, undefined],
    ]);
  });

  it('max_turns defaults to 10, and a conversation the user would go on with is cut there', async () => {
    expect(spec.max_turns).toBe(10);
    const driver = new ConversationDriver(scriptedPlayer(new ScriptedUser(spec)), 2, fixedClock);
    driver.open('hi');
    expect(await driver.agentTurn(turn('dob?'))).toMatchObject({ turn: 2 });
    expect(await driver.agentTurn(turn('dob?'))).toBeNull();
    expect(driver.record()).toMatchObject({ end: 'max_turns', maxTurns: 2 });
  });

  it('at max_turns a user who ends the conversation ends it: the conversation is not cut', async () => {
    const driver = new ConversationDriver(scriptedPlayer(new ScriptedUser(spec)), 1, fixedClock);
    driver.open('hi');
    expect(await driver.agentTurn(turn('All done here.'))).toBeNull();
    expect(driver.record().end).toBe('user');
  });
});
