// The same commands as a process group and in a container (agent.isolation: container): stdin,
// stdout, stderr, exit code, signals, timeouts and output caps read the same.

import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentContainers } from '../../src/agent/container.js';
import { type GroupRunOptions, runInGroup } from '../../src/agent/run-process.js';
import {
  AGENT_IMAGE,
  RUN_CONTAINER_TESTS,
  requireAgentImage,
  requireDocker,
  TEST_DOCKER_HOST,
} from '../helpers/docker.js';

const dir = mkdtempSync(join(tmpdir(), 'sg-container-run-'));
chmodSync(dir, 0o755);
let containers: AgentContainers;

beforeAll(async () => {
  if (!TEST_DOCKER_HOST) return;
  await requireAgentImage();
  containers = new AgentContainers({ image: AGENT_IMAGE, checkoutDir: dir });
});
afterAll(async () => {
  await containers?.close();
  rmSync(dir, { recursive: true, force: true });
});

const CASES: { name: string; opts: Partial<GroupRunOptions> & { command: string } }[] = [
  {
    name: 'stdin echoed, stderr apart, exit code 3',
    opts: { command: 'cat; echo oops >&2; exit 3', stdin: '{"a":1}\n' },
  },
  { name: 'no stdin reads as empty', opts: { command: 'cat; echo done' } },
  { name: 'a hang is stopped at the timeout with SIGTERM', opts: { command: 'sleep 30', timeoutMs: 1500 } },
  {
    name: 'an agent that ignores SIGTERM gets SIGKILL after the grace period',
    opts: { command: 'trap "" TERM; sleep 30', timeoutMs: 1500, graceMs: 1000 },
  },
  { name: 'an agent killed by a signal reports the signal', opts: { command: 'kill -9 $$' } },
  {
    name: 'output beyond the cap is cut the same way',
    opts: { command: 'i=0; while [ $i -lt 3000 ]; do echo line $i; i=$((i+1)); done', maxOutputBytes: 2000 },
  },
];

describe.runIf(RUN_CONTAINER_TESTS)('a command in a container reads as a process', () => {
  for (const c of CASES) {
    it(c.name, { timeout: 120_000 }, async () => {
      requireDocker();
      const opts: GroupRunOptions = {
        cwd: dir,
        env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
        timeoutMs: 60_000,
        graceMs: 2000,
        maxOutputBytes: 1 << 20,
        ...c.opts,
      };
      const view = (r: Awaited<ReturnType<typeof runInGroup>>) => ({
        exitCode: r.exitCode,
        signal: r.signal,
        timedOut: r.timedOut,
        stdout: r.stdout.text(),
        stderr: r.stderr.text(),
        truncated: r.stdout.truncated,
        spawnError: r.spawnError,
      });
      const asProcess = view(await runInGroup(opts));
      const inContainer = view(await containers.run(opts));
      expect(inContainer).toEqual(asProcess);
    });
  }
});
