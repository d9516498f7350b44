// Red team 2: `agent.dockerfile` comes from the head (docs/isolation.md: "with the head's agent.image
// or agent.dockerfile"), also under the action's `isolation: container` in the pull_request_target
// workflow. Its RUN steps are built by the host's daemon on Docker's default bridge network, AFTER
// the database engine started (compare.ts: engine, template, then each side's setup). The
// testcontainers engine publishes PostgreSQL (superuser test/test) on every host interface, so a
// RUN step reaches it through the bridge gateway: superuser over the template both sides clone.
// Stand-in for the published port: a TCP listener on 0.0.0.0; the RUN step must not reach it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_IMAGE,
  dockerApi,
  RUN_CONTAINER_TESTS,
  requireAgentImage,
  requireDocker,
} from '../helpers/docker.js';

let server: Server;
let port = 0;
const reached: string[] = [];
const dirs: string[] = [];
beforeAll(async () => {
  server = createServer((s) => {
    reached.push(String(s.remoteAddress));
    s.end('SERVER-ANSWERED\n');
  });
  await new Promise<void>((ok) => server.listen(0, '0.0.0.0', ok));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((ok) => server.close(ok));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.runIf(RUN_CONTAINER_TESTS)("red team 2: the head's agent.dockerfile build", () => {
  it('cannot reach a port the host publishes on every interface (the testcontainers database)', async () => {
    requireDocker();
    await requireAgentImage();
    const dir = mkdtempSync(join(tmpdir(), 'sg-redteam2-build-'));
    dirs.push(dir);
    // Connects to the default gateway (the host on the bridge) from /proc/net/route.
    writeFileSync(
      join(dir, 'probe.js'),
      `const fs = require('fs'); const net = require('net');
const line = fs.readFileSync('/proc/net/route', 'utf8').split('\\n').find((l) => l.split('\\t')[1] === '00000000');
const hex = line ? line.split('\\t')[2] : '';
const gw = hex ? [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.') : '';
if (!gw) { console.log('no route'); process.exit(0); }
const s = net.connect(${port}, gw);
s.setTimeout(3000, () => { console.log('timeout'); process.exit(0); });
s.on('data', (d) => { console.log('got', String(d)); process.exit(0); });
s.on('error', (e) => { console.log('error', e.code); process.exit(0); });
`,
    );
    writeFileSync(
      join(dir, 'Dockerfile'),
      `FROM ${AGENT_IMAGE}\nCOPY probe.js /probe.js\nRUN node /probe.js\n`,
    );
    const { resolveAgentImage } = await import('../../src/agent/container-docker.js');
    const { image } = await resolveAgentImage({ dockerfile: 'Dockerfile', checkoutDir: dir });
    await dockerApi('DELETE', `/images/${encodeURIComponent(image)}?force=1`);
    expect(reached).toEqual([]);
  }, 300_000);
});
