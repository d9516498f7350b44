// Attack: requests that try to outlive their episode. A body sent one byte a second by a process
// that escaped the agent's process group, an agent that sleeps past its timeout mid-request, a fault
// delay longer than the episode, and headers that never finish. Each episode must end on its own
// terms, and each cut-off call must be in the record (cutOff, status 499) for the graders to see.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scenario, Tool } from '../../src/config/schema.js';
import { AgentConfig } from '../../src/config/schema.js';
import { createGateway, episodeDeadline } from '../../src/gateway/index.js';
import type { EpisodeRecord } from '../../src/model/episode.js';
import type { PlannedEpisode } from '../../src/plan/expand.js';
import { runEpisode } from '../../src/run/episode.js';
import { prepareSide } from '../../src/run/side.js';
import { ALLOWED, num, openShop, rule, type Shop } from '../gateway/fixture.js';

let shop: Shop;
let dir: string;
const senderPids: number[] = [];
beforeAll(async () => {
  shop = await openShop();
  dir = await mkdtemp(join(tmpdir(), 'stategate-slow-'));
  await writeFile(join(dir, 'slow-sender.mjs'), SLOW_SENDER);
  await writeFile(join(dir, 'escape.mjs'), ESCAPING_AGENT);
  await writeFile(join(dir, 'sleeper.mjs'), SLEEPING_AGENT);
}, 300_000);
afterAll(async () => {
  for (const pid of senderPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone: the gateway closed its socket and it exited
    }
  }
  await shop?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 300_000);

// Sends a POST whose 200-byte body goes out one byte a second; says "sending" on stdout after the
// headers and two bytes are out, and exits when the gateway closes the connection.
const SLOW_SENDER = `
import net from 'node:net';
const url = new URL(process.argv[2] + '/tools/add_note');
const body = JSON.stringify({ body: 'x'.repeat(190) });
const socket = net.connect(Number(url.port), url.hostname, () => {
  socket.write('POST ' + url.pathname + ' HTTP/1.1\\r\\nHost: ' + url.host +
    '\\r\\nContent-Type: application/json\\r\\nContent-Length: ' + Buffer.byteLength(body) + '\\r\\n\\r\\n');
  let i = 0;
  setInterval(() => {
    if (i < body.length) socket.write(body[i++]);
    if (i === 2) process.stdout.write('sending\\n');
  }, 1000);
});
socket.on('close', () => process.exit(0));
socket.on('error', () => process.exit(0));
`;

// The agent starts the slow sender in a session of its own (out of reach of the process group the
// harness stops), waits until it is sending, and exits 0 at once.
const ESCAPING_AGENT = `
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
const child = spawn(process.execPath, ['slow-sender.mjs', process.env.STATEGATE_TOOLS_URL], {
  detached: true,
  stdio: ['ignore', 'pipe', 'ignore'],
});
writeFileSync('sender.pid', String(child.pid));
child.stdout.once('data', () => {
  child.stdout.destroy();
  child.unref();
  console.log(JSON.stringify({ reply: 'done', outcome: 'SUCCESS' }));
  process.exit(0);
});
`;

// The agent sends the headers and half its body, then sleeps far past its timeout.
const SLEEPING_AGENT = `
import net from 'node:net';
const url = new URL(process.env.STATEGATE_TOOLS_URL + '/tools/add_note');
const body = JSON.stringify({ body: 'never finished' });
const socket = net.connect(Number(url.port), url.hostname, () => {
  socket.write('POST ' + url.pathname + ' HTTP/1.1\\r\\nHost: ' + url.host +
    '\\r\\nContent-Type: application/json\\r\\nContent-Length: ' + Buffer.byteLength(body) + '\\r\\n\\r\\n' +
    body.slice(0, 8));
});
socket.on('error', () => undefined);
setInterval(() => undefined, 1000);
`;

const SCENARIO: Scenario = {
  id: 'slow',
  description: '',
  tags: [],
  state: { rows: {} },
  input: { message: 'add a note', context: {} },
  faults: [],
  expect: [],
  file: 'scenarios/slow.yaml',
};

/** Runs one real episode with `command` as the agent, through the run stage's own episode runner. */
async function episodeWith(command: string, timeout: string): Promise<EpisodeRecord> {
  const side = await prepareSide({
    side: 'head',
    checkout: { ref: dir, dir, sha: null, dispose: async () => undefined },
    agent: AgentConfig.parse({ command, timeout }),
    outDir: dir,
    harnessEnv: { PATH: process.env.PATH, HOME: process.env.HOME ?? '/root' },
  });
  const planned: PlannedEpisode = {
    id: 'slow.head.r1',
    scenario: SCENARIO,
    side: 'head',
    repeat: 1,
    seed: 1,
  };
  return runEpisode(
    {
      template: shop.template,
      gateway: shop.gateway,
      tools: new Map<string, Tool>(ALLOWED.map((t) => [t.name, t])),
      side,
      expose: false,
    },
    planned,
  );
}

/** Opens a raw connection and sends the start of a POST to `path`; the body never completes. */
function startSlowPost(port: number, path: string, sent = '{"bo'): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n${sent}`,
      );
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

function closed(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) resolve();
    socket.on('close', () => resolve());
    socket.on('error', () => undefined);
  });
}

/** Gives a raw request time to reach the gateway (nothing observable says its headers were read). */
async function settle(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

describe('real agents', () => {
  it('an agent whose escaped child sends one byte a second: the episode ends, the call is recorded cut off', async () => {
    const record = await episodeWith('node escape.mjs', '60s');
    senderPids.push(Number(await readFile(join(dir, 'sender.pid'), 'utf8')));
    expect(record.infraError).toBeUndefined();
    expect(record.agent.exitCode).toBe(0);
    expect(record.agent.timedOut).toBe(false);
    expect(record.calls).toHaveLength(1);
    expect(record.calls[0]).toMatchObject({
      tool: 'add_note',
      status: 499,
      cutOff: true,
      args: null,
      mutated: false,
      error: { code: 'CUT_OFF' },
    });
    expect(record.calls[0].error?.message).toContain('the episode ended');
  }, 120_000);

  it('an agent that sleeps past its timeout mid-request: timed out, and its half-sent call recorded', async () => {
    const record = await episodeWith('node sleeper.mjs', '2s');
    expect(record.infraError).toBeUndefined();
    expect(record.agent.timedOut).toBe(true);
    expect(record.calls).toHaveLength(1);
    expect(record.calls[0]).toMatchObject({ tool: 'add_note', status: 499, cutOff: true, args: null });
    expect(record.calls[0].error?.message).toMatch(/8 bytes in/);
  }, 120_000);
});

describe('the gateway alone', () => {
  it("cuts off a slow body when the episode's deadline passes, and refuses calls after it", async () => {
    const deadline = episodeDeadline();
    const ep = await shop.episode({ deadline: deadline.signal });
    const path = new URL(`${ep.session.toolsUrl}/tools/add_note`).pathname;
    const socket = await startSlowPost(shop.gateway.port, path);
    await settle(300);
    deadline.start(200);
    await closed(socket);
    const late = await fetch(`${ep.session.toolsUrl}/tools/add_note`, {
      method: 'POST',
      body: JSON.stringify({ body: 'after the deadline' }),
    }).catch((err: Error) => err);
    expect(late).toBeInstanceOf(Error);
    await ep.session.close();
    deadline.clear();
    const calls = ep.session.calls();
    expect(calls.map((c) => [c.tool, c.status, c.cutOff, c.args])).toEqual([
      ['add_note', 499, true, null],
      ['add_note', 499, true, null],
    ]);
    expect(calls[0].error?.message).toContain("the agent's timeout (200 ms) passed");
    expect(num(await ep.scalar('SELECT count(*) FROM notes'))).toBe(0);
  }, 60_000);

  it('cuts off a slow MCP request the same way, recorded before its tool name is known', async () => {
    const deadline = episodeDeadline();
    const ep = await shop.episode({ deadline: deadline.signal });
    const socket = await startSlowPost(
      shop.gateway.port,
      new URL(ep.session.mcpUrl).pathname,
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_',
    );
    await settle(300);
    deadline.start(200);
    await closed(socket);
    await ep.session.close();
    deadline.clear();
    expect(ep.session.calls()).toMatchObject([
      { via: 'mcp', tool: '', status: 499, cutOff: true, args: null, error: { code: 'CUT_OFF' } },
    ]);
  }, 60_000);

  it('cuts off, on close, a call held by a fault delay longer than the episode, keeping what the tool did', async () => {
    const ep = await shop.episode({
      faults: [rule({ tool: 'add_note', fault: 'delay', delay_ms: 600_000 })],
    });
    const pending = fetch(`${ep.session.toolsUrl}/tools/add_note`, {
      method: 'POST',
      body: JSON.stringify({ body: 'landed' }),
    }).catch((err: Error) => err);
    while (num(await ep.scalar('SELECT count(*) FROM notes')) === 0) await settle(20);
    await ep.session.close();
    expect(await pending).toBeInstanceOf(Error);
    const [call] = ep.session.calls();
    expect(call).toMatchObject({
      tool: 'add_note',
      status: 499,
      cutOff: true,
      fault: 'delay',
      mutated: true,
      args: { body: 'landed' },
    });
    expect(call.error?.message).toContain('before its reply was sent (200)');
  }, 60_000);

  it('closes a connection whose headers never finish', async () => {
    const gateway = await createGateway({ headersTimeoutMs: 1_000 });
    try {
      const socket = net.connect(gateway.port, '127.0.0.1');
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write('POST /e/0123/tools/add_note HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      const drip = setInterval(() => socket.writable && socket.write('X'), 200);
      await closed(socket);
      clearInterval(drip);
      expect(socket.destroyed).toBe(true);
    } finally {
      await gateway.close();
    }
  }, 60_000);
});
