// The model-played user against a local server that speaks the OpenAI chat completions API and
// answers by fixed rules: it is NOT a model (a scripted stand-in, named so), and every test reads
// what crossed the wire: Stategate's prompt with the facts and the rules, temperature 0, the
// episode's seed, the harness's key; the run's cache pinning base and head to the same user turn;
// ###STOP###; a simulator failure as an error of the episode, never the agent's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Scenario, ScenarioFile } from '../../src/config/schema.js';
import { ConversationDriver } from '../../src/conversation/driver.js';
import { UserSimulator } from '../../src/conversation/simulator.js';
import { SIMULATOR_RULES } from '../../src/conversation/simulator-prompt.js';
import { answer, type ChatServer, completion, startChatServer } from '../helpers/chat-server.js';

interface Seen {
  body: { model: string; temperature: number; seed: number; messages: { role: string; content: string }[] };
  auth: string | undefined;
}
const seen: Seen[] = [];
let status = 200;
let notAModel: ChatServer;

beforeAll(async () => {
  // The rule-following stand-in for a model: dob when asked for a date of birth, stop on "cancelled".
  notAModel = await startChatServer((body, req, res) => {
    seen.push({ body: body as unknown as Seen['body'], auth: req.headers.authorization });
    if (status !== 200) return answer(res, status, '{"error":"down"}');
    const messages = body.messages as { role: string; content: string }[];
    const last = messages[messages.length - 1].content.toLowerCase();
    const content = last.includes('cancelled')
      ? '###STOP###'
      : last.includes('date of birth')
        ? 'It is 1990-04-02.'
        : "I don't know";
    answer(
      res,
      200,
      completion(content, {}).replace(
        '"choices"',
        '"usage":{"prompt_tokens":100,"completion_tokens":10},"choices"',
      ),
    );
  });
});
afterAll(() => notAModel.close());

const scenario: Scenario = {
  ...ScenarioFile.parse({
    id: 'cancel-same-name',
    input: { message: 'Hi, this is John Smith. Please cancel my appointment.' },
    user: {
      model: true,
      instructions: 'You are John Smith and want your Tuesday appointment cancelled.',
      facts: { dob: { value: '1990-04-02' }, which: { value: 'Tuesday 14:30' } },
      max_turns: 5,
    },
  }),
  expect: [],
  file: 'scenarios/cancel.yaml',
};

function simulator() {
  return new UserSimulator({
    provider: 'openai',
    url: notAModel.url,
    model: 'gpt-4.1-mini',
    apiKey: 'sk-harness-only',
    timeoutMs: 5000,
    prices: { 'gpt-4.1-mini': { input: 0.4, output: 1.6 } },
  });
}

/** Plays one side: the agent's turns given, the user's answers by the simulator. */
async function play(sim: UserSimulator, side: 'base' | 'head', agentTurns: string[]) {
  const driver = new ConversationDriver(sim.simulator(scenario, { side, repeat: 1, seed: 4242 }), 5);
  driver.open(scenario.input.message);
  for (const reply of agentTurns) if (!(await driver.agentTurn({ reply, done: false }))) break;
  return driver.record();
}

describe('the model-played user', () => {
  it("sends Stategate's prompt: instructions, the facts as private context, every rule, temperature 0 and the seed", async () => {
    seen.length = 0;
    const record = await play(simulator(), 'base', ['What is your date of birth?']);
    expect(seen).toHaveLength(1);
    const { body, auth } = seen[0];
    expect(auth).toBe('Bearer sk-harness-only');
    expect(body).toMatchObject({ model: 'gpt-4.1-mini', temperature: 0, seed: 4242 });
    const system = body.messages[0];
    expect(system.role).toBe('system');
    expect(system.content).toContain('You are John Smith and want your Tuesday appointment cancelled.');
    expect(system.content).toContain('- dob: 1990-04-02');
    expect(system.content).toContain('- which: Tuesday 14:30');
    for (const rule of SIMULATOR_RULES) expect(system.content).toContain(rule);
    expect(system.content).toContain('###STOP###');
    // Roles swapped: the user's own opening is the assistant's, the agent's turn the user's.
    expect(body.messages.slice(1)).toEqual([
      { role: 'assistant', content: 'Hi, this is John Smith. Please cancel my appointment.' },
      { role: 'user', content: 'What is your date of birth?' },
    ]);
    // The fact is learned from the user's text containing its value.
    expect(record.learned).toEqual({ dob: 2 });
    expect(record.simulator).toMatchObject({ calls: 1, inputTokens: 100, outputTokens: 10, cached: 0 });
    expect(record.simulator?.costUsd).toBeCloseTo((100 * 0.4 + 10 * 1.6) / 1e6, 12);
  });

  it('pins both sides: the same scenario, repeat and transcript get one call and the same turn', async () => {
    seen.length = 0;
    const sim = simulator();
    const [base, head] = await Promise.all([
      play(sim, 'base', ['What is your date of birth?', 'Which appointment?']),
      play(sim, 'head', ['What is your date of birth?', 'Your appointment is cancelled.']),
    ]);
    // Turn 2 is shared; the third differs because the agents said different things.
    expect(seen).toHaveLength(3);
    expect(base.turns[2].text).toBe(head.turns[2].text);
    expect(base.turns[4].text).toBe("I don't know");
    expect(head.end).toBe('user');
    expect((base.simulator?.calls ?? 0) + (head.simulator?.calls ?? 0)).toBe(3);
    expect((base.simulator?.cached ?? 0) + (head.simulator?.cached ?? 0)).toBe(1);
  });

  it('an agent that names the value itself learns nothing unless the user says it', async () => {
    const record = await play(simulator(), 'head', ['I see your birthday 1990-04-02 and appointment, ok?']);
    expect(record.learned).toEqual({});
  });

  it('a simulator that fails ends the conversation as simulator_error, and is not pinned', async () => {
    status = 503;
    const sim = simulator();
    const failed = await play(sim, 'base', ['What is your date of birth?']);
    expect(failed.end).toBe('simulator_error');
    expect(failed.error).toBe('the user simulator answered HTTP 503');
    status = 200;
    const retried = await play(sim, 'base', ['What is your date of birth?']);
    expect(retried.learned).toEqual({ dob: 2 });
  });
});
