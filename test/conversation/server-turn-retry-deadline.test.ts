// A conversation's timeout covers all its turns together. A turn whose kept-alive connection failed
// before any answer is sent again with what is left of the time, not a new budget: a server that
// reads turn 2, stalls almost to the deadline and then resets the connection must not get its
// (resent) turn answered and counted after the episode's timeout.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentServer } from '../../src/agent/server.js';
import { UserSpec } from '../../src/config/schema.js';
import { ConversationDriver, scriptedPlayer } from '../../src/conversation/driver.js';
import { ScriptedUser } from '../../src/conversation/scripted-user.js';

const TIMEOUT_MS = 1000;
const STALL_MS = 800;
const server = http.createServer((req, res) => {
  const reused = ((req.socket as { served?: number }).served ?? 0) > 0;
  (req.socket as { served?: number }).served = 1;
  let text = '';
  req.on('data', (c) => {
    text += c;
  });
  req.on('end', () => {
    const turn = (JSON.parse(text) as { conversation: { turn: number } }).conversation.turn;
    const answer = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (turn === 1) return answer({ reply: 'What is your date of birth?' });
    // First delivery of turn 2 (on the kept connection): stall, then reset, no response byte sent.
    if (reused) setTimeout(() => req.socket.resetAndDestroy(), STALL_MS);
    else setTimeout(() => answer({ reply: 'Done.', done: true }), STALL_MS);
  });
});
let url: string;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('a resent conversation turn', () => {
  it("stays within the episode's timeout", async () => {
    const agent = await startAgentServer({
      url,
      cwd: tmpdir(),
      env: {},
      logFile: join(tmpdir(), 'sg-retry.log'),
    });
    const user = UserSpec.parse({ facts: { dob: { value: '1990-04-02', asked: ['date of birth'] } } });
    const driver = new ConversationDriver(scriptedPlayer(new ScriptedUser(user)), 5);
    const run = await agent.runEpisode({
      input: { message: 'Cancel my appointment.', context: {} },
      vars: {
        toolsUrl: 't',
        mcpUrl: 'm',
        episode: 'ep-9',
        scenario: 's',
        seed: 1,
        side: 'base',
        conversation: true,
      },
      timeoutMs: TIMEOUT_MS,
      conversation: driver,
    });
    // The episode had 1000 ms; what came back after that is no turn of it (the resend had only what
    // was left). Nothing here depends on how fast the machine is: a slower one times out sooner.
    expect({ timedOut: run.timedOut, result: run.result }).toEqual({ timedOut: true, result: undefined });
    expect(driver.record().end).toBe('timeout');
  }, 10_000);
});
