// The conversation protocol in server mode (docs/agent-protocol.md), over real HTTP: one POST per
// agent turn with `conversation: {id, turn, max_turns, history}`, the response that turn's result;
// `done: true` in a response ends it, and a turn answered with an error ends it as the agent's doing.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentServer } from '../../src/agent/server.js';
import { UserSpec } from '../../src/config/schema.js';
import { ConversationDriver, scriptedPlayer } from '../../src/conversation/driver.js';
import { ScriptedUser } from '../../src/conversation/scripted-user.js';

const bodies: Record<string, unknown>[] = [];
let answer: (body: Record<string, unknown>) => { status: number; body: unknown };
/** Connections the server accepted, and whether it resets the next request on a reused one. */
let connections = 0;
let resetReused = false;
const server = http.createServer((req, res) => {
  const reused = (req.socket as { served?: number }).served ?? 0;
  (req.socket as { served?: number }).served = reused + 1;
  if (resetReused && reused > 0) {
    // What a server's keep-alive timeout does to a connection the client is about to reuse.
    resetReused = false;
    req.socket.resetAndDestroy();
    return;
  }
  let text = '';
  req.on('data', (c) => {
    text += c;
  });
  req.on('end', () => {
    const body = JSON.parse(text) as Record<string, unknown>;
    bodies.push(body);
    const out = answer(body);
    res.writeHead(out.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(out.body));
  });
});
server.on('connection', () => {
  connections++;
});
let url: string;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const user = UserSpec.parse({ facts: { dob: { value: '1990-04-02', asked: ['date of birth'] } } });

async function converse() {
  bodies.length = 0;
  const agent = await startAgentServer({
    url,
    cwd: tmpdir(),
    env: {},
    logFile: join(tmpdir(), 'sg-conv.log'),
  });
  // The adapter's check that something listens is a connection too: only the turns' count.
  connections = 0;
  const driver = new ConversationDriver(scriptedPlayer(new ScriptedUser(user)), 5);
  const run = await agent.runEpisode({
    input: { message: 'Cancel my appointment.', context: {} },
    vars: {
      toolsUrl: 't',
      mcpUrl: 'm',
      episode: 'ep-7',
      scenario: 's',
      seed: 3,
      side: 'base',
      conversation: true,
    },
    timeoutMs: 10_000,
    conversation: driver,
  });
  return { run, conversation: driver.record() };
}

describe('server mode conversations', () => {
  it('POSTs each turn with the conversation id, turn, max_turns and the history before the message', async () => {
    answer = (body) => {
      const turn = (body.conversation as { turn: number }).turn;
      return {
        status: 200,
        body: turn === 1 ? { reply: 'What is your date of birth?' } : { reply: 'Done.', done: true },
      };
    };
    const { run, conversation } = await converse();
    expect(bodies.map((b) => [b.message, b.conversation, b.episode])).toEqual([
      ['Cancel my appointment.', { id: 'ep-7', turn: 1, max_turns: 5, history: [] }, 'ep-7'],
      [
        '1990-04-02',
        {
          id: 'ep-7',
          turn: 2,
          max_turns: 5,
          history: [
            { role: 'user', text: 'Cancel my appointment.' },
            { role: 'agent', text: 'What is your date of birth?' },
          ],
        },
        'ep-7',
      ],
    ]);
    expect(conversation).toMatchObject({ end: 'agent', learned: { dob: 2 } });
    expect(run.result).toEqual({ reply: 'Done.' });
    expect(run.exitCode).toBe(0);
  });

  it('a turn answered 500 ends the conversation as the agent having left it', async () => {
    answer = (body) =>
      (body.conversation as { turn: number }).turn === 1
        ? { status: 200, body: { reply: 'What is your date of birth?' } }
        : { status: 500, body: { error: 'boom' } };
    const { run, conversation } = await converse();
    expect(conversation.end).toBe('agent_left');
    expect(conversation.error).toMatch(/^agent turn 2: the agent server answered HTTP 500/);
    expect(run.result).toBeUndefined();
  });

  it("keeps one connection for a conversation's turns", async () => {
    answer = (body) => {
      const turn = (body.conversation as { turn: number }).turn;
      return {
        status: 200,
        body: turn < 3 ? { reply: 'What is your date of birth?' } : { reply: 'Done.', done: true },
      };
    };
    const { run } = await converse();
    expect(bodies).toHaveLength(3);
    expect(connections).toBe(1);
    expect(run.result).toEqual({ reply: 'Done.' });
  });

  it('sends a turn again on a new connection when the kept one was closed before it was read', async () => {
    answer = (body) => {
      const turn = (body.conversation as { turn: number }).turn;
      return {
        status: 200,
        body: turn === 1 ? { reply: 'What is your date of birth?' } : { reply: 'Done.', done: true },
      };
    };
    resetReused = true;
    const { run, conversation } = await converse();
    expect(resetReused).toBe(false);
    expect(connections).toBe(2);
    expect(bodies.map((b) => (b.conversation as { turn: number }).turn)).toEqual([1, 2]);
    expect(conversation.end).toBe('agent');
    expect(run.result).toEqual({ reply: 'Done.' });
  });
});
