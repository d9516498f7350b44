import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { baseAgentEnv } from '../../src/agent/env.js';
import { type AgentServer, AgentStartError, startAgentServer } from '../../src/agent/server.js';
import type { EpisodeVars } from '../../src/agent/types.js';
import { fixtures, freePort, isRunning, runnerEnv, scratchDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
const servers: AgentServer[] = [];

beforeAll(async () => {
  ({ dir, cleanup } = await scratchDir());
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});
afterAll(() => cleanup());

const vars = (episode: string): EpisodeVars => ({
  toolsUrl: `http://127.0.0.1:4100/e/${episode}`,
  mcpUrl: `http://127.0.0.1:4100/e/${episode}/mcp`,
  episode,
  scenario: 'refund-basic',
  seed: 42,
  side: 'base',
});

/** Starts the plain-Node fixture server through agent.serve on a fresh port. */
async function startFixtureServer(name: string): Promise<AgentServer> {
  const port = await freePort();
  const server = await startAgentServer({
    serve: `node ${fixtures}agent-server.mjs`,
    url: `http://127.0.0.1:${port}/`,
    cwd: dir,
    env: baseAgentEnv({ harnessEnv: runnerEnv(), env: { AGENT_PORT: String(port) }, passEnv: [] }),
    logFile: join(dir, `${name}.log`),
    graceMs: 500,
  });
  servers.push(server);
  return server;
}

function episode(server: AgentServer, message: string, id: string, timeoutMs = 30_000) {
  return server.runEpisode({
    input: { message, context: { customer_id: 'CUS-1' } },
    vars: vars(id),
    timeoutMs,
  });
}

describe('startAgentServer with agent.serve', () => {
  it('starts the server, waits for it, and answers episodes with the POSTed fields', async () => {
    const server = await startFixtureServer('answers');
    const r = await episode(server, 'Refund ORD-1001', 'ep-1');
    expect(r.resultError).toBeUndefined();
    expect(r.exitCode).toBe(0);
    expect(r.timedOut).toBe(false);
    expect(r.result?.outcome).toBe('SUCCESS');
    const seen = JSON.parse(r.result!.reply);
    expect(seen.body).toEqual({
      message: 'Refund ORD-1001',
      context: { customer_id: 'CUS-1' },
      tools_url: 'http://127.0.0.1:4100/e/ep-1',
      mcp_url: 'http://127.0.0.1:4100/e/ep-1/mcp',
      episode: 'ep-1',
      scenario: 'refund-basic',
      seed: 42,
      side: 'base',
    });
    // The server got the agent environment: no runner secrets, no episode variables.
    expect(seen.env).not.toHaveProperty('GITHUB_TOKEN');
    expect(seen.env).not.toHaveProperty('ACTIONS_RUNTIME_TOKEN');
    expect(seen.env).not.toHaveProperty('INPUT_FOO');
    expect(seen.env).not.toHaveProperty('STATEGATE_TOOLS_URL');
    const log = await readFile(server.logFile, 'utf8');
    expect(log).toContain('episode ep-1: Refund ORD-1001');
  });

  it('reports bad answers as facts', async () => {
    const server = await startFixtureServer('bad-answers');
    const failed = await episode(server, 'status-500', 'ep-500');
    expect(failed.exitCode).toBeNull();
    expect(failed.resultError).toBe('the agent server answered HTTP 500: "internal trouble"');
    const html = await episode(server, 'not-json', 'ep-html');
    expect(html.resultError).toBe('the response body is not JSON: "<html>hello</html>"');
    const noReply = await episode(server, 'no-reply', 'ep-no-reply');
    expect(noReply.resultError).toBe('the response body: the result must have a string "reply", got none');
  });

  it('times out a request that gets no answer, and the server keeps serving', async () => {
    const server = await startFixtureServer('timeout');
    const hung = await episode(server, 'hang', 'ep-hang', 300);
    expect(hung.timedOut).toBe(true);
    expect(hung.result).toBeUndefined();
    expect(hung.resultError).toBe('the agent server did not answer within 300 ms');
    const next = await episode(server, 'hello', 'ep-after');
    expect(next.result?.outcome).toBe('SUCCESS');
  });

  it('fails the episode a crash interrupts, restarts the server once, then stops restarting', async () => {
    const server = await startFixtureServer('crash');
    const first = JSON.parse((await episode(server, 'hello', 'ep-1')).result!.reply).pid as number;

    const crashed = await episode(server, 'crash', 'ep-2');
    expect(crashed.result).toBeUndefined();
    expect(crashed.resultError).toMatch(/^agent server exited \(code 3\) during the episode; see /);

    const afterRestart = await episode(server, 'hello', 'ep-3');
    expect(afterRestart.resultError).toBeUndefined();
    const second = JSON.parse(afterRestart.result!.reply).pid as number;
    expect(second).not.toBe(first);
    expect(isRunning(first)).toBe(false);
    expect(server.restarts).toBe(1);

    const crashedAgain = await episode(server, 'crash', 'ep-4');
    expect(crashedAgain.resultError).toMatch(/^agent server exited \(code 3\) during the episode/);
    const refused = await episode(server, 'hello', 'ep-5');
    expect(refused.resultError).toMatch(
      /^agent server exited \(code 3\) after it had been restarted once; see /,
    );
    expect(server.restarts).toBe(1);

    const log = await readFile(server.logFile, 'utf8');
    expect(log.match(/crashing on purpose/g)).toHaveLength(2);
    expect(log).toContain('restarting the agent server (once)');
  });

  it('stops the whole server group', async () => {
    const server = await startFixtureServer('stop');
    const pid = JSON.parse((await episode(server, 'hello', 'ep-1')).result!.reply).pid as number;
    await server.stop();
    expect(isRunning(pid)).toBe(false);
    const after = await episode(server, 'hello', 'ep-2');
    expect(after.resultError).toBe('the agent server was stopped');
  });

  it('fails to start with the log tail when serve exits first', async () => {
    const port = await freePort();
    const start = startAgentServer({
      serve: 'echo "cannot find module ./server.js" >&2; exit 1',
      url: `http://127.0.0.1:${port}`,
      cwd: dir,
      env: baseAgentEnv({ harnessEnv: process.env, env: {}, passEnv: [] }),
      logFile: join(dir, 'early-exit.log'),
    });
    await expect(start).rejects.toThrow(AgentStartError);
    await expect(start).rejects.toThrow(/agent server exited \(code 1\) before it accepted connections/);
    await expect(start).rejects.toThrow(/cannot find module \.\/server\.js/);
  });

  it('gives up on a server that never listens, and kills it', async () => {
    const port = await freePort();
    const pidFile = join(dir, 'never-listens.pid');
    const start = startAgentServer({
      serve: `echo $$ > ${pidFile}; exec sleep 300`,
      url: `http://127.0.0.1:${port}`,
      cwd: dir,
      env: baseAgentEnv({ harnessEnv: process.env, env: {}, passEnv: [] }),
      logFile: join(dir, 'never-listens.log'),
      healthTimeoutMs: 1000,
      graceMs: 300,
    });
    await expect(start).rejects.toThrow(
      /did not accept connections within 1000 ms \(last attempt: ECONNREFUSED\)/,
    );
    expect(isRunning(Number(await readFile(pidFile, 'utf8')))).toBe(false);
  });
});

describe('startAgentServer without agent.serve', () => {
  it('refuses a URL nothing listens on', async () => {
    const port = await freePort();
    const start = startAgentServer({
      url: `http://127.0.0.1:${port}/agent`,
      cwd: dir,
      env: {},
      logFile: join(dir, 'x.log'),
    });
    await expect(start).rejects.toThrow(
      `agent.url http://127.0.0.1:${port}/agent does not accept connections (ECONNREFUSED), and no agent.serve starts it`,
    );
  });

  it('refuses a URL that is not http', async () => {
    const start = startAgentServer({
      url: 'ftp://example.com',
      cwd: dir,
      env: {},
      logFile: join(dir, 'x.log'),
    });
    await expect(start).rejects.toThrow('agent.url ftp://example.com must be http:// or https://');
  });

  it('posts to a server that is already up, at its path, and reports it going away', async () => {
    const seen: { url?: string; body?: unknown }[] = [];
    const external = http.createServer(async (req, res) => {
      let raw = '';
      for await (const chunk of req) raw += chunk;
      seen.push({ url: req.url, body: JSON.parse(raw) });
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ reply: 'hi', outcome: 'FAILURE' }));
    });
    await new Promise<void>((resolve) => external.listen(0, '127.0.0.1', resolve));
    const { port } = external.address() as { port: number };
    const server = await startAgentServer({
      url: `http://127.0.0.1:${port}/agent/run`,
      cwd: dir,
      env: {},
      logFile: join(dir, 'external.log'),
    });
    const r = await server.runEpisode({
      input: { message: 'hi', context: {} },
      vars: { ...vars('ep-x'), databaseUrl: 'postgres://episode-db' },
      timeoutMs: 10_000,
    });
    expect(r.result).toEqual({ reply: 'hi', outcome: 'FAILURE' });
    expect(seen[0].url).toBe('/agent/run');
    expect(seen[0].body).toMatchObject({ episode: 'ep-x', database_url: 'postgres://episode-db' });

    await new Promise<void>((resolve) => external.close(() => resolve()));
    const gone = await server.runEpisode({
      input: { message: 'hi', context: {} },
      vars: vars('ep-y'),
      timeoutMs: 10_000,
    });
    expect(gone.resultError).toBe(
      `could not reach the agent server at http://127.0.0.1:${port}/agent/run: ECONNREFUSED`,
    );
    await server.stop();
  });
});
