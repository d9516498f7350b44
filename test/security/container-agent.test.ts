// An agent in a container (agent.isolation: container) hunts for the harness: other processes,
// harness variables, the host's PostgreSQL, a harness port, the Docker socket, the checkout, the
// root filesystem; it leaves a daemon behind. Through the real pipeline and a real Docker daemon,
// for agent.command and for agent.url + agent.serve; then a missing image, agent.dockerfile and a
// server that dies.

import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_IMAGE,
  agentContainerIds,
  agentContainersSince,
  dockerApi,
  RUN_CONTAINER_TESTS,
  requireAgentImage,
  requireDocker,
  TEST_DOCKER_HOST,
} from '../helpers/docker.js';
import { kvSuite, readEpisodes, replyOf } from '../reliability/kv-suite.js';
import { compareOnTestServer } from './suite.js';

// The hunt, shared by the command agent and the agent server.
const HUNT = `
import { readdirSync, readFileSync as readFile, writeFileSync as writeFile } from 'node:fs';
import { connect } from 'node:net';
import { spawn } from 'node:child_process';
function probe(opts) {
  return new Promise((resolve) => {
    const s = connect(opts);
    const t = setTimeout(() => { s.destroy(); resolve('timeout'); }, 3000);
    s.once('connect', () => { clearTimeout(t); s.destroy(); resolve('connected'); });
    s.once('error', (e) => { clearTimeout(t); resolve(e.code); });
  });
}
// Asks a PostgreSQL server whether it speaks SSL: any one-byte answer means it was reached.
function pgAnswers(databaseUrl) {
  const u = new URL(databaseUrl);
  return new Promise((resolve) => {
    const s = connect({ host: u.hostname, port: Number(u.port) });
    s.once('connect', () => s.write(Buffer.from([0, 0, 0, 8, 4, 210, 22, 47])));
    s.once('data', (d) => { s.destroy(); resolve(d.toString('latin1', 0, 1)); });
    s.once('error', (e) => resolve(e.code));
  });
}
function attempt(fn) { try { fn(); return 'written'; } catch (e) { return e.code; } }
async function hunt(toolsUrl, databaseUrl) {
  const procs = readdirSync('/proc').filter((n) => /^\\d+$/.test(n)).map((p) => {
    try { return readFile('/proc/' + p + '/cmdline', 'utf8').split('\\0').join(' ').trim(); } catch { return '?'; }
  });
  const daemon = spawn('/bin/sh', ['-c', 'sleep 300'], { detached: true, stdio: 'ignore' });
  daemon.unref();
  const tools = await fetch(toolsUrl + '/tools/list', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  return {
    uid: process.getuid(),
    procs,
    env: Object.keys(process.env).sort(),
    path: process.env.PATH,
    configured: process.env.SG_CONFIGURED,
    passed: process.env.SG_PASSED,
    toolsHost: new URL(toolsUrl).hostname,
    toolsStatus: tools.status,
    caps: /CapEff:\\s*(\\S+)/.exec(readFile('/proc/self/status', 'utf8'))[1],
    writeCheckout: attempt(() => writeFile('/workspace/pwned', 'x')),
    writeRoot: attempt(() => writeFile('/pwned', 'x')),
    writeHome: attempt(() => writeFile(process.env.HOME + '/scratch', 'x')),
    built: (() => { try { return readFile('/workspace/built.txt', 'utf8').trim(); } catch (e) { return e.code; } })(),
    hostPostgres: await probe({ host: '127.0.0.1', port: 5432 }),
    harnessPort: await probe({ host: '127.0.0.1', port: Number(process.env.SG_HARNESS_PORT) }),
    dockerSocket: await probe({ path: '/var/run/docker.sock' }),
    privateDockerSocket: await probe({ path: ${JSON.stringify((TEST_DOCKER_HOST ?? '').replace('unix://', ''))} }),
    database: databaseUrl ? { host: new URL(databaseUrl).hostname, answer: await pgAnswers(databaseUrl) } : null,
  };
}
`;

const SERVER = `${HUNT}
import { createServer } from 'node:http';
createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', async () => {
    const b = JSON.parse(body);
    const found = await hunt(b.tools_url, b.database_url);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ reply: JSON.stringify(found), outcome: 'SUCCESS' }));
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

// In CI without a daemon every test here fails, saying why (requireDocker).
const run = RUN_CONTAINER_TESTS;
const dirs: string[] = [];
let harness: ReturnType<typeof createServer>;
let harnessPort = 0;
let baseline: string[] = [];

beforeAll(async () => {
  if (!run) return;
  requireDocker();
  await requireAgentImage();
  baseline = await agentContainerIds();
  // A harness service on this machine's loopback (like the embedded PostgreSQL or the action's
  // own servers): nothing in the container may reach it.
  harness = createServer((c) => c.end('harness\n'));
  await new Promise<void>((resolve) => harness.listen(0, '127.0.0.1', () => resolve()));
  harnessPort = (harness.address() as { port: number }).port;
  process.env.SG_PASSED = 'passed-through';
  process.env.SG_SECRET_TOKEN = 'a-harness-secret-value';
});
afterAll(() => {
  harness?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function huntSuite(mode: 'command' | 'serve', expose: boolean): string {
  const dir = kvSuite({
    scenarios: ['hunt'],
    agent: `${HUNT}\ndone(await hunt(url, process.env.DATABASE_URL));`,
    expect: `  - id: untouched
    query: SELECT count(*) FROM kv
    equals: 1
`,
    timeout: '60s',
  });
  dirs.push(dir);
  // mkdtemp made it 0700; the agent's user inside is not root.
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'server.mjs'), SERVER);
  const config = readFileSync(join(dir, 'stategate.yml'), 'utf8');
  // In command mode agent.setup leaves a file the agent reads back (setup runs in a container too).
  const agent =
    mode === 'command'
      ? '  command: node agent.mjs\n  setup: echo from-setup > built.txt\n'
      : '  url: http://127.0.0.1:8787/episode\n  serve: node server.mjs\n';
  writeFileSync(
    join(dir, 'stategate.yml'),
    config
      .replace(
        '  command: node agent.mjs\n',
        `${agent}  isolation: container\n  image: ${AGENT_IMAGE}\n  env: { SG_CONFIGURED: yes-configured, SG_HARNESS_PORT: "${harnessPort}" }\n  pass_env: [SG_PASSED]\n`,
      )
      .replace('  schema:', `  expose: ${expose}\n  schema:`),
  );
  return dir;
}

async function huntOnce(mode: 'command' | 'serve', expose: boolean) {
  const dir = huntSuite(mode, expose);
  const out = join(dir, 'out');
  await compareOnTestServer(dir, null, out);
  const [episode] = readEpisodes(out);
  expect(episode.record.infraError).toBeUndefined();
  return { found: replyOf(episode), episode };
}

// PWD is the shell's own; DATABASE_URL only with expose.
const ALLOWED_ENV = [
  'DATABASE_URL',
  'HOME',
  'HOSTNAME',
  'LANG',
  'PATH',
  'PORT',
  'PWD',
  'SG_CONFIGURED',
  'SG_HARNESS_PORT',
  'SG_PASSED',
  'STATEGATE_EPISODE',
  'STATEGATE_MCP_URL',
  'STATEGATE_SCENARIO',
  'STATEGATE_SEED',
  'STATEGATE_SIDE',
  'STATEGATE_TOOLS_URL',
  'TMPDIR',
  'TZ',
];

function expectContained(found: any, mode: 'command' | 'serve'): void {
  expect(found.uid).not.toBe(0);
  expect(found.caps).toBe('0000000000000000');
  // Only the container's own processes: the runner, the agent (or its server) and its children.
  for (const cmd of found.procs as string[]) {
    expect(cmd).toMatch(/runner\.js|agent\.mjs|server\.mjs|sleep 300|^\/bin\/sh -c|^$/);
  }
  expect((found.procs as string[]).join('\n')).not.toMatch(/postgres|vitest|dockerd/);
  for (const name of found.env as string[]) {
    if (!name.startsWith('LC_')) expect(ALLOWED_ENV).toContain(name);
  }
  expect(found.env).not.toContain('SG_SECRET_TOKEN');
  expect(found.env).not.toContain('DOCKER_HOST');
  expect(found.configured).toBe('yes-configured');
  expect(found.passed).toBe('passed-through');
  // The image's PATH, not the harness's.
  expect(found.path).toBe('/usr/local/bin:/usr/bin:/bin');
  if (mode === 'command') {
    expect(found.env).toContain('STATEGATE_TOOLS_URL');
    expect(found.built).toBe('from-setup');
  }
  // The tools URL is the one thing it reaches.
  expect(found.toolsHost).toBe('127.0.0.1');
  expect(found.toolsStatus).toBe(200);
  expect(found.harnessPort).not.toBe('connected');
  expect(found.dockerSocket).not.toBe('connected');
  expect(found.privateDockerSocket).not.toBe('connected');
  expect(found.writeCheckout).toBe('EROFS');
  expect(found.writeRoot).toBe('EROFS');
  expect(found.writeHome).toBe('written');
}

describe.runIf(run)('an agent in a container hunting for the harness', () => {
  for (const mode of ['command', 'serve'] as const) {
    it(`finds only its own processes, variables and tools URL (agent.${mode})`, {
      timeout: 180_000,
    }, async () => {
      const { found, episode } = await huntOnce(mode, false);
      expectContained(found, mode);
      // Without expose, the host's PostgreSQL port is not there.
      expect(found.hostPostgres).not.toBe('connected');
      expect(found.database).toBeNull();
      expect(episode.passed).toBe(true);
      // The daemon it started went with its container; no agent container is left.
      expect(await agentContainersSince(baseline)).toEqual([]);
    });
  }

  it('reaches its own database with database.expose, through 127.0.0.1 inside', {
    timeout: 180_000,
  }, async () => {
    const { found } = await huntOnce('command', true);
    expectContained(found, 'command');
    expect(found.database.host).toBe('127.0.0.1');
    // 'N' or 'S': PostgreSQL answered the SSL request.
    expect(['N', 'S']).toContain(found.database.answer);
    expect(await agentContainersSince(baseline)).toEqual([]);
  });
});

describe.runIf(run)('a missing agent.image', () => {
  it('refuses the run before any episode', { timeout: 120_000 }, async () => {
    const dir = kvSuite({
      scenarios: ['any'],
      agent: 'done({})',
      expect: '  - id: any\n    query: SELECT 1\n    equals: 1\n',
    });
    dirs.push(dir);
    chmodSync(dir, 0o755);
    const config = readFileSync(join(dir, 'stategate.yml'), 'utf8');
    // A registry on this machine's loopback that is not there: the pull fails at once.
    writeFileSync(
      join(dir, 'stategate.yml'),
      config.replace(
        '  timeout:',
        '  isolation: container\n  image: localhost:1/stategate-missing:1\n  timeout:',
      ),
    );
    await expect(compareOnTestServer(dir, null, join(dir, 'out'))).rejects.toThrow(
      /agent.image localhost:1\/stategate-missing:1 is not on the Docker host/,
    );
  });
});

describe.runIf(run)('agent.dockerfile', () => {
  it('builds the image from the checkout, runs the agent in it and removes it afterwards', {
    timeout: 300_000,
  }, async () => {
    const dir = kvSuite({
      scenarios: ['built'],
      agent:
        "import { readFileSync } from 'node:fs';\ndone({ marker: readFileSync('/marker.txt', 'utf8').trim() });",
      expect: '  - id: untouched\n    query: SELECT count(*) FROM kv\n    equals: 1\n',
    });
    dirs.push(dir);
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'marker.txt'), 'from-the-dockerfile\n');
    writeFileSync(join(dir, 'Dockerfile.agent'), `FROM ${AGENT_IMAGE}\nCOPY marker.txt /marker.txt\n`);
    const config = readFileSync(join(dir, 'stategate.yml'), 'utf8');
    writeFileSync(
      join(dir, 'stategate.yml'),
      config.replace('  timeout:', '  isolation: container\n  dockerfile: Dockerfile.agent\n  timeout:'),
    );
    const out = join(dir, 'out');
    await compareOnTestServer(dir, null, out);
    const [episode] = readEpisodes(out);
    expect(replyOf(episode)).toEqual({ marker: 'from-the-dockerfile' });
    expect(await agentContainersSince(baseline)).toEqual([]);
    const images = (await dockerApi('GET', '/images/json')).body as { RepoTags: string[] | null }[];
    expect(
      images.flatMap((i) => i.RepoTags ?? []).filter((t) => t.startsWith('localhost/stategate-agent')),
    ).toEqual([]);
  });
});

describe.runIf(run)('an agent server in a container that dies', () => {
  it('is restarted once, in a new container, and the next episode runs', { timeout: 180_000 }, async () => {
    const dir = kvSuite({
      scenarios: ['a-crash', 'b-fine'],
      concurrency: 1,
      agent: '',
      expect: '  - id: untouched\n    query: SELECT count(*) FROM kv\n    equals: 1\n',
    });
    dirs.push(dir);
    chmodSync(dir, 0o755);
    writeFileSync(
      join(dir, 'server.mjs'),
      `import { createServer } from 'node:http';
createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    if (JSON.parse(body).scenario === 'a-crash') process.exit(3);
    res.end(JSON.stringify({ reply: 'fine', outcome: 'SUCCESS' }));
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
`,
    );
    const config = readFileSync(join(dir, 'stategate.yml'), 'utf8');
    writeFileSync(
      join(dir, 'stategate.yml'),
      config.replace(
        '  command: node agent.mjs\n',
        `  url: http://127.0.0.1:9000/\n  serve: node server.mjs\n  isolation: container\n  image: ${AGENT_IMAGE}\n`,
      ),
    );
    const out = join(dir, 'out');
    await compareOnTestServer(dir, null, out);
    const byScenario = Object.fromEntries(readEpisodes(out).map((g) => [g.record.scenario, g]));
    expect(byScenario['a-crash'].record.agent.resultError).toMatch(/agent server exited \(code 3\)/);
    expect(
      byScenario['b-fine'].record.agent.result?.reply,
      JSON.stringify(byScenario['b-fine'].record.agent),
    ).toBe('fine');
    expect(readFileSync(join(out, 'agent-server-head.log'), 'utf8')).toContain(
      'restarting the agent server (once)',
    );
    expect(await agentContainersSince(baseline)).toEqual([]);
  });
});
