// Attack: the sandbox forwards every loopback URL among STATEGATE_TOOLS_URL, STATEGATE_MCP_URL and
// DATABASE_URL into the agent's loopback-only network. Without database.expose, DATABASE_URL is not
// an episode variable, so the head's own agent.env can name it: pointed at a server of the machine
// (a listener the test starts, PostgreSQL on 5432), the harness would carry the agent's connections
// there: the machine's PostgreSQL as its superuser, another episode's database, a program run on
// the host, a non-loopback address. The docs promise that no other server of the machine answers
// inside the sandbox: such a suite is refused before any agent runs.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/pipeline.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { type AttackSuite, attackSuite, processesWith, runAttack } from './attack-suite.js';

const suites: AttackSuite[] = [];
const servers: Server[] = [];
afterAll(() => {
  for (const s of suites) rmSync(s.dir, { recursive: true, force: true });
  for (const s of servers) s.close();
});

// Connects to 127.0.0.1:port inside its sandbox and reports the first bytes it reads; then asks
// PostgreSQL on 5432 who it is (psql is in /usr/bin, which the sandbox mounts).
const AGENT = `
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { spawnSync } from 'node:child_process';
const { context } = JSON.parse(readFileSync(0, 'utf8'));
const banner = await new Promise((resolve) => {
  const s = connect(context.port, '127.0.0.1');
  let got = '';
  s.setTimeout(2000, () => { s.destroy(); resolve(got || null); });
  s.on('data', (d) => { got += d; if (got.includes('\\n')) { s.destroy(); resolve(got.trim()); } });
  s.once('error', () => resolve(null));
});
const psql = spawnSync('psql', ['-XAtc', 'select current_user || \\':\\' || (select rolsuper from pg_roles where rolname = current_user)', 'postgres://postgres@127.0.0.1:5432/postgres'], { encoding: 'utf8', timeout: 5000 });
const pg = (psql.stdout || '').trim() || null;
process.stdout.write(JSON.stringify({ reply: JSON.stringify({ banner, pg, env: process.env.DATABASE_URL ?? null }) }) + '\\n');
`;

function withAgentEnv(suite: AttackSuite, env: Record<string, string>): void {
  writeFileSync(join(suite.dir, 'agent.mjs'), AGENT);
  const config = join(suite.dir, 'stategate.yml');
  const lines = Object.entries(env)
    .map(([k, v]) => `    ${k}: ${JSON.stringify(v)}\n`)
    .join('');
  writeFileSync(
    config,
    readFileSync(config, 'utf8').replace(
      '  command: node agent.mjs\n',
      `  command: node agent.mjs\n  env:\n${lines}`,
    ),
  );
}

async function bannerServer(secret: string): Promise<number> {
  const server = createServer((s) => {
    s.on('error', () => undefined);
    s.end(`${secret}\n`);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as { port: number }).port;
}

/** The run refuses such a suite before any agent runs (src/agent/env.ts). */
const REFUSED = /is set by stategate/;

describe('agent.env naming a URL variable the sandbox forwards', () => {
  it('does not carry the agent to a server of the machine (DATABASE_URL without expose)', {
    timeout: 120_000,
  }, async () => {
    const secret = 'host-only-listener-banner';
    const port = await bannerServer(secret);
    const suite = attackSuite('whoami.mjs', { port });
    suites.push(suite);
    withAgentEnv(suite, { DATABASE_URL: `postgres://x@127.0.0.1:${port}/x` });
    await expect(runAttack(suite, 'postgres')).rejects.toThrow(REFUSED);
  });

  it("does not hand the agent the machine's PostgreSQL server", { timeout: 120_000 }, async () => {
    const suite = attackSuite('whoami.mjs', { port: 5432 });
    suites.push(suite);
    withAgentEnv(suite, { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await expect(runAttack(suite, 'postgres')).rejects.toThrow(REFUSED);
  });

  it("leaves no forward of agent.setup's variables for the episodes to use", {
    timeout: 120_000,
  }, async () => {
    // In agent.setup no episode variable overrides agent.env's STATEGATE_TOOLS_URL: its forward is
    // made then, and its socket stays in /stategate/side for every later sandbox of the side.
    const secret = 'reached-through-a-setup-forward';
    const port = await bannerServer(secret);
    const suite = attackSuite('whoami.mjs', { port });
    suites.push(suite);
    withAgentEnv(suite, { STATEGATE_TOOLS_URL: `http://127.0.0.1:${port}/` });
    writeFileSync(
      join(suite.dir, 'agent.mjs'),
      `
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
readFileSync(0, 'utf8');
const got = [];
for (const name of readdirSync('/stategate/side').filter((n) => n.startsWith('fw-'))) {
  got.push(await new Promise((resolve) => {
    const s = connect('/stategate/side/' + name);
    let text = '';
    s.setTimeout(1000, () => { s.destroy(); resolve(text); });
    s.on('data', (d) => { text += d; });
    s.on('close', () => resolve(text));
    s.on('error', () => resolve(text));
  }));
}
process.stdout.write(JSON.stringify({ reply: JSON.stringify({ got }) }) + '\\n');
`,
    );
    const config = join(suite.dir, 'stategate.yml');
    writeFileSync(config, readFileSync(config, 'utf8').replace('  command:', '  setup: "true"\n  command:'));
    await expect(runAttack(suite, 'postgres')).rejects.toThrow(REFUSED);
  });

  it.runIf(externalAddress() !== undefined)(
    'does not carry the agent off its loopback-only network (a non-loopback address)',
    { timeout: 120_000 },
    async () => {
      // Any host the URL names is connected to by the harness: the agent's "own network with only a
      // loopback" then reaches other machines (a cloud metadata endpoint, the internet).
      const secret = 'reached-a-non-loopback-address';
      const address = externalAddress()!;
      const server = createServer((s) => {
        s.on('error', () => undefined);
        s.end(`${secret}\n`);
      });
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, address, () => resolve()));
      const port = (server.address() as { port: number }).port;
      const suite = attackSuite('whoami.mjs', { port });
      suites.push(suite);
      withAgentEnv(suite, { DATABASE_URL: `postgres://x@${address}:${port}/x` });
      await expect(runAttack(suite, 'postgres')).rejects.toThrow(REFUSED);
    },
  );
  it("does not let one episode change another episode's database", { timeout: 120_000 }, async () => {
    // Two episodes, one after the other. The first, reaching PostgreSQL as its superuser through the
    // forward, adds a row to every database of this run (found by a tag only this suite's fixtures
    // hold) with the capture triggers off; the second does nothing and must be graded on that.
    const tag = `tag-${randomBytes(6).toString('hex')}`;
    const suite = attackSuite('whoami.mjs', { tag });
    suites.push(suite);
    withAgentEnv(suite, { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' });
    writeFileSync(join(suite.dir, 'db', 'fixtures.yaml'), `kv:\n  - { k: ${tag}, v: fixture }\n`);
    writeFileSync(
      join(suite.dir, 'agent.mjs'),
      `
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
const { context } = JSON.parse(readFileSync(0, 'utf8'));
const admin = 'postgres://postgres@127.0.0.1:5432/';
const psql = (db, sql) => (spawnSync('psql', ['-XAtc', sql, admin + db], { encoding: 'utf8', timeout: 5000 }).stdout || '').trim();
const touched = [];
if (process.env.STATEGATE_EPISODE.endsWith('.r1')) {
  for (const db of psql('postgres', "select datname from pg_database where datallowconn and datname not in ('postgres','template0','template1')").split('\\n').filter(Boolean)) {
    if (psql(db, "select count(*) from kv where k = '" + context.tag + "'") !== '1') continue;
    psql(db, "set session_replication_role = replica; insert into kv values ('planted', 'by r1')");
    touched.push(db);
  }
}
process.stdout.write(JSON.stringify({ reply: JSON.stringify({ touched }) }) + '\\n');
`,
    );
    const config = join(suite.dir, 'stategate.yml');
    writeFileSync(config, readFileSync(config, 'utf8').replace('repeats: 1', 'repeats: 2\nconcurrency: 1'));
    const out = join(suite.dir, '.stategate');
    await expect(
      runCompare({
        base: null,
        head: suite.dir,
        repo: suite.dir,
        out,
        engine: 'postgres',
        databaseUrl: TEST_DATABASE_URL,
      }),
    ).rejects.toThrow(REFUSED);
    // Refused before any episode: no agent ran, so none touched another's database.
    expect(existsSync(join(out, 'episodes.jsonl'))).toBe(false);
  });

  it('does not let the agent run a program outside its sandbox that outlives the run', {
    timeout: 120_000,
  }, async () => {
    // PostgreSQL's superuser runs programs (COPY ... TO PROGRAM) as the server's user, on the host.
    const marker = `sg-crosstalk-${randomBytes(6).toString('hex')}`;
    const suite = attackSuite('whoami.mjs', {});
    suites.push(suite);
    withAgentEnv(suite, { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' });
    writeFileSync(
      join(suite.dir, 'agent.mjs'),
      `
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
readFileSync(0, 'utf8');
spawnSync('psql', ['-XAtc', "COPY (SELECT 1) TO PROGRAM 'setsid sh -c \\"sleep 30; true\\" ${marker} >/dev/null 2>&1 < /dev/null &'", 'postgres://postgres@127.0.0.1:5432/postgres'], { timeout: 5000 });
process.stdout.write(JSON.stringify({ reply: '{}' }) + '\\n');
`,
    );
    try {
      await expect(runAttack(suite, 'postgres')).rejects.toThrow(REFUSED);
      expect(processesWith(marker)).toEqual([]);
    } finally {
      // setsid made the shell its group's leader: the group goes, its sleep with it.
      for (const pid of processesWith(marker)) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          process.kill(pid, 'SIGKILL');
        }
      }
    }
  });
});

function externalAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}
