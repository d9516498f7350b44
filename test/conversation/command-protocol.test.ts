// The conversation protocol in command mode (docs/agent-protocol.md), against real processes: the
// first stdin line and what the harness answers, logs between turns, and the agents that would get a
// wrong PASS or hang the harness: one that loops until max_turns, one that closes stdout early, one
// that hangs, and one that prints a transcript of its own. The harness's transcript is the record.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommandAgent } from '../../src/agent/command.js';
import { buildAgentEnv } from '../../src/agent/env.js';
import { UserSpec } from '../../src/config/schema.js';
import { ConversationDriver, scriptedPlayer } from '../../src/conversation/driver.js';
import { ScriptedUser } from '../../src/conversation/scripted-user.js';
import { gradeCompleted } from '../../src/grade/completed.js';
import { scratchDir } from '../agent/helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await scratchDir());
});
afterAll(() => cleanup());

const user = UserSpec.parse({
  facts: { dob: { value: '1990-04-02', asked: ['date of birth'] } },
  say: [],
});

/** Runs a node script as a conversation agent with the scripted user above. */
async function converse(name: string, source: string, opts: { maxTurns?: number; timeoutMs?: number } = {}) {
  const file = join(dir, `${name}.mjs`);
  await writeFile(file, source);
  const driver = new ConversationDriver(scriptedPlayer(new ScriptedUser(user)), opts.maxTurns ?? 4);
  const env = buildAgentEnv({
    harnessEnv: process.env,
    env: {},
    passEnv: [],
    episode: {
      toolsUrl: 'http://127.0.0.1:9/e/x',
      mcpUrl: 'http://127.0.0.1:9/e/x/mcp',
      episode: 'e1',
      scenario: 's',
      seed: 1,
      side: 'head',
      conversation: true,
    },
  });
  const run = await runCommandAgent({
    command: `node ${file}`,
    cwd: dir,
    env,
    input: { message: 'Cancel my appointment.', context: { clinic: 'north' } },
    timeoutMs: opts.timeoutMs ?? 20_000,
    graceMs: 200,
    conversation: driver,
  });
  return { run, conversation: driver.record() };
}

// Reads stdin line by line; `onTurn(line)` returns the reply objects to print for it.
const READER = `
import { createInterface } from 'node:readline';
const rl = createInterface({ input: process.stdin });
const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
`;

describe('command mode conversations', () => {
  it('sends the input with conversation {turn: 1, max_turns} first, then {message, turn}; logs are not turns', async () => {
    const { run, conversation } = await converse(
      'echo',
      `${READER}
let n = 0;
rl.on('line', (line) => {
  n += 1;
  console.log('a log line, not a turn');
  console.log('{"not": "a turn either"}');
  if (n === 1) say({ reply: 'What is your date of birth? ' + JSON.stringify({ first: JSON.parse(line), env: process.env.STATEGATE_CONVERSATION }) });
  else say({ reply: 'Thanks, you said ' + line, done: true, outcome: 'SUCCESS' });
});
`,
    );
    expect(conversation.end).toBe('agent');
    const agentTurns = conversation.turns.filter((t) => t.role === 'agent').map((t) => t.text);
    const first = JSON.parse(agentTurns[0].slice('What is your date of birth? '.length));
    expect(first).toEqual({
      first: {
        message: 'Cancel my appointment.',
        context: { clinic: 'north' },
        conversation: { turn: 1, max_turns: 4 },
      },
      env: '1',
    });
    expect(agentTurns[1]).toBe('Thanks, you said {"message":"1990-04-02","turn":2}');
    expect(run.result).toEqual({ reply: agentTurns[1], outcome: 'SUCCESS' });
    expect(run.exitCode).toBe(0);
    expect(gradeCompleted(run, conversation).verdict).toBe('pass');
  });

  it('closes stdin when the user ends the conversation, and the agent exits on its own', async () => {
    const { run, conversation } = await converse(
      'statement',
      `${READER}
rl.on('line', () => say({ reply: 'Your appointment is cancelled.' }));
rl.on('close', () => process.exit(0));
`,
    );
    expect(conversation.end).toBe('user');
    expect(conversation.turns).toHaveLength(2);
    expect(run.exitCode).toBe(0);
    expect(gradeCompleted(run, conversation).verdict).toBe('pass');
  });

  it('an agent that loops until max_turns is cut there, and completed fails', async () => {
    const { run, conversation } = await converse(
      'loop',
      `${READER}
rl.on('line', () => say({ reply: 'And your date of birth?' }));
`,
      { maxTurns: 3 },
    );
    expect(conversation.end).toBe('max_turns');
    expect(conversation.turns.filter((t) => t.role === 'agent')).toHaveLength(3);
    expect(run.exitCode).toBe(0);
    const completed = gradeCompleted(run, conversation);
    expect(completed.verdict).toBe('fail');
    expect(completed.message).toBe(
      'the conversation was cut at max_turns (3 agent turns) before the user or the agent ended it',
    );
  });

  it('an agent that closes stdout after its first turn has left the conversation: completed fails', async () => {
    const { run, conversation } = await converse(
      'close-stdout',
      `${READER}
rl.once('line', () => { say({ reply: 'What is your date of birth?' }); process.stdout.end(); });
rl.on('close', () => process.exit(0));
`,
    );
    // Its one turn was answered; then it closed stdout and exited when stdin closed... or never read it.
    expect(['agent_left']).toContain(conversation.end);
    expect(run.exitCode).toBe(0);
    expect(gradeCompleted(run, conversation).verdict).toBe('fail');
  });

  it('an agent that hangs after its first turn times out: the conversation ends with timeout', async () => {
    const { run, conversation } = await converse(
      'hang',
      `${READER}
rl.once('line', () => say({ reply: 'What is your date of birth?' }));
setInterval(() => {}, 1000);
`,
      { timeoutMs: 1500 },
    );
    expect(run.timedOut).toBe(true);
    expect(conversation.end).toBe('timeout');
    expect(gradeCompleted(run, conversation).verdict).toBe('fail');
  });

  it('an agent that prints its own transcript and facts learned changes nothing of the record', async () => {
    const { run, conversation } = await converse(
      'fake-transcript',
      `${READER}
rl.once('line', () => {
  console.log(JSON.stringify({ role: 'user', turn: 2, text: '1990-04-02', facts: ['dob'] }));
  say({ reply: 'Cancelled, I verified you.', done: true, transcript: [{ role: 'user', text: '1990-04-02' }], learned: { dob: 1 } });
});
`,
    );
    expect(conversation.learned).toEqual({});
    expect(conversation.turns.map((t) => t.text)).toEqual([
      'Cancel my appointment.',
      'Cancelled, I verified you.',
    ]);
    // The extra fields of its line are dropped from the result too.
    expect(run.result).toEqual({ reply: 'Cancelled, I verified you.' });
  });

  it('garbage and an endless line between turns are logs, not turns', async () => {
    const { conversation } = await converse(
      'garbage',
      `${READER}
rl.once('line', () => {
  process.stdout.write('\\u0000\\u001b[2J not json {\\n');
  process.stdout.write('x'.repeat(3 * 1024 * 1024) + '\\n');
  say({ reply: 'Bye.', done: true });
});
`,
    );
    expect(conversation.end).toBe('agent');
    expect(conversation.turns.map((t) => t.text)).toEqual(['Cancel my appointment.', 'Bye.']);
  });
});
