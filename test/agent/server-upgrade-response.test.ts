// An untrusted agent server that answers an episode's POST with `101 Switching Protocols` must get a
// graded failure within the episode's timeout, not hold the harness (and the whole run) forever.
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentServer } from '../../src/agent/server.js';

const server = net.createServer((socket) => {
  socket.on('error', () => {});
  socket.once('data', () =>
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'),
  );
});
let url: string;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('an agent server answering 101 Switching Protocols', () => {
  it('is a failed episode within its timeout', async () => {
    const agent = await startAgentServer({
      url,
      cwd: tmpdir(),
      env: {},
      logFile: join(tmpdir(), 'sg-101.log'),
    });
    const run = await Promise.race([
      agent.runEpisode({
        input: { message: 'hi', context: {} },
        vars: { toolsUrl: 't', mcpUrl: 'm', episode: 'ep-1', scenario: 's', seed: 1, side: 'base' },
        timeoutMs: 1000,
      }),
      new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 4000)),
    ]);
    expect(run).not.toBe('still waiting');
    expect(run).toMatchObject({ exitCode: null });
    expect((run as { result?: unknown }).result).toBeUndefined();
    expect((run as { resultError?: string }).resultError).toMatch(/HTTP 101 \(a protocol switch\)/);
  }, 10_000);
});
