// engine: auto, the container runtime probe, the testcontainers engine without a runtime, and sweeping.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DatabaseConfig } from '../../src/config/schema.js';
import { chooseEngine } from '../../src/sandbox/choose.js';
import { detectContainerRuntime, runtimeCandidates } from '../../src/sandbox/container-runtime.js';
import { sweepLeftovers } from '../../src/sandbox/leftovers.js';
import { processStart } from '../../src/sandbox/owner.js';
import { createTestcontainersEngine } from '../../src/sandbox/testcontainers.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';

const dir = mkdtempSync(join(tmpdir(), 'stategate-runtime-test-'));
const NOWHERE = `unix://${join(dir, 'no-docker.sock')}`;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function listen(path: string, reply: string): Promise<Server> {
  const server = createServer((socket) => {
    // The probe may hang up before the reply is written (its timeout); that is not an error here.
    socket.on('error', () => undefined);
    socket.once('data', () => socket.end(reply));
  });
  return new Promise((resolve) => server.listen(path, () => resolve(server)));
}

describe('container runtime probe', () => {
  it('asks DOCKER_HOST only when it is set, else the usual sockets', () => {
    expect(runtimeCandidates({ DOCKER_HOST: 'tcp://10.1.2.3:2375' }).map((c) => c.label)).toEqual([
      'tcp://10.1.2.3:2375',
    ]);
    const labels = runtimeCandidates({ XDG_RUNTIME_DIR: '/run/user/1000' }).map((c) => c.label);
    expect(labels.slice(0, 2)).toEqual(['/var/run/docker.sock', '/run/user/1000/docker.sock']);
    expect(labels[2]).toMatch(/\.docker\/run\/docker\.sock$/);
  });

  it('counts a socket as a runtime only when GET /_ping answers 200', async () => {
    const good = join(dir, 'good.sock');
    const bad = join(dir, 'bad.sock');
    const servers = [
      await listen(good, 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK'),
      await listen(bad, 'HTTP/1.1 500 Internal Server Error\r\n\r\n'),
    ];
    try {
      // A generous timeout: on a loaded machine the answering socket must not be mistaken for a silent one.
      expect(await detectContainerRuntime({ DOCKER_HOST: `unix://${good}` }, 10_000)).toEqual({
        answered: `unix://${good}`,
        tried: [`unix://${good}`],
      });
      expect((await detectContainerRuntime({ DOCKER_HOST: `unix://${bad}` })).answered).toBeNull();
      expect((await detectContainerRuntime({ DOCKER_HOST: NOWHERE })).answered).toBeNull();
    } finally {
      for (const s of servers) s.close();
    }
  });
});

describe('engine choice', () => {
  const saved = process.env.DOCKER_HOST;
  afterAll(() => {
    if (saved === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = saved;
  });

  it('fails the testcontainers engine at once when no runtime answers, and says what to do', async () => {
    process.env.DOCKER_HOST = NOWHERE;
    await expect(createTestcontainersEngine({ image: 'postgres:16-alpine' })).rejects.toThrow(
      `no container runtime answered (tried ${NOWHERE}). Start Docker, or set DOCKER_HOST, or use \`engine: postgres\` with a \`services:\` postgres container and \`url: \${STATEGATE_DATABASE_URL}\`, or \`engine: embedded\`.`,
    );
  });

  it('picks postgres when a URL is set, and says so', async () => {
    const engine = await chooseEngine(DatabaseConfig.parse({ url: TEST_DATABASE_URL }));
    try {
      expect(engine.name).toBe('postgres');
      expect(engine.reason).toBe('auto: database.url is set');
    } finally {
      await engine.close();
    }
  });

  it('refuses engine: postgres without a URL', async () => {
    await expect(chooseEngine(DatabaseConfig.parse({ engine: 'postgres' }))).rejects.toThrow(
      'engine postgres needs database.url, e.g. url: ${STATEGATE_DATABASE_URL}',
    );
  });

  it('picks the embedded engine without a URL or a container runtime', async () => {
    process.env.DOCKER_HOST = NOWHERE;
    const engine = await chooseEngine(DatabaseConfig.parse({}));
    try {
      expect(engine.name).toBe('embedded');
      // One short line for the report; the addresses probed only in the terminal's detail.
      expect(engine.reason).toBe('auto: no database.url, no container runtime');
      expect(engine.detail).toBe(`no container runtime answered at ${NOWHERE}`);
      const template = await engine.buildTemplate({
        schema: [{ file: 's.sql', sql: 'CREATE TABLE t (id int PRIMARY KEY)' }],
        fixtures: [],
      });
      expect(template.tables).toEqual({ t: ['id'] });
    } finally {
      await engine.close();
    }
  }, 180_000);
});

describe('sweepLeftovers', () => {
  it('drops what a gone process left, and keeps what a live one (or a recent remote one) owns', async () => {
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    const prefix = () => `sg_${randomBytes(4).toString('hex')}`;
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const owners = {
      gone: { stategate: 1, pid: dead, host: hostname(), pidStart: null, created: new Date().toISOString() },
      live: {
        stategate: 1,
        pid: process.pid,
        host: hostname(),
        pidStart: processStart(process.pid),
        created: new Date().toISOString(),
      },
      remoteOld: { stategate: 1, pid: 1, host: 'elsewhere', pidStart: null, created: '2020-01-01T00:00:00Z' },
      remoteNew: {
        stategate: 1,
        pid: 1,
        host: 'elsewhere',
        pidStart: null,
        created: new Date().toISOString(),
      },
    };
    const names = Object.fromEntries(Object.keys(owners).map((k) => [k, prefix()])) as Record<
      keyof typeof owners,
      string
    >;
    try {
      for (const [kind, owner] of Object.entries(owners)) {
        const p = names[kind as keyof typeof owners];
        await admin.query(`CREATE DATABASE ${p}_e_1`);
        await admin.query(`COMMENT ON DATABASE ${p}_e_1 IS ${pg.escapeLiteral(JSON.stringify(owner))}`);
        await admin.query(`CREATE ROLE ${p}_r_1`);
      }
      const swept = await sweepLeftovers(TEST_DATABASE_URL, { olderThanMs: 3600_000 });
      const mine = (list: string[]) =>
        list.filter((n) => Object.values(names).some((p) => n.startsWith(p))).sort();
      expect(mine(swept.databases)).toEqual([`${names.gone}_e_1`, `${names.remoteOld}_e_1`].sort());
      expect(mine(swept.roles)).toEqual([`${names.gone}_r_1`, `${names.remoteOld}_r_1`].sort());
      const left = await admin.query('SELECT datname FROM pg_database WHERE datname = ANY($1) ORDER BY 1', [
        [`${names.live}_e_1`, `${names.remoteNew}_e_1`, `${names.gone}_e_1`],
      ]);
      expect(left.rows.map((r) => r.datname)).toEqual([`${names.live}_e_1`, `${names.remoteNew}_e_1`].sort());
    } finally {
      for (const p of Object.values(names)) {
        await admin.query(`DROP DATABASE IF EXISTS ${p}_e_1 WITH (FORCE)`);
        await admin.query(`DROP ROLE IF EXISTS ${p}_r_1`);
      }
      await admin.end();
    }
  }, 180_000);
});
