// Red team 2: the testcontainers engine (what `engine: auto` picks on ubuntu-latest, where a
// container runtime answers) starts @testcontainers/postgresql's container with the library's
// defaults: superuser `test`, password `test`, and port 5432 published on every host interface
// (HostPort "0", no HostIp). In process isolation the head's agent shares the host's network: it
// scans 127.0.0.1 for PostgreSQL and logs in as test/test, a superuser of the harness's database
// server (every episode database of both sides, the templates, the change log). On a self-hosted
// runner, so can anything on the runner's network. The harness's admin credential must be a secret,
// and the port published on the loopback only. (The password is now random: src/sandbox/testcontainers.ts.)
import { PostgreSqlContainer } from '@testcontainers/postgresql';
import { describe, expect, it, vi } from 'vitest';

vi.mock('../../src/sandbox/container-runtime.js', () => ({
  detectContainerRuntime: async () => ({ answered: 'unix:///var/run/docker.sock', tried: [] }),
  noRuntimeMessage: () => 'none',
}));

async function containerConfig(): Promise<{
  password: string;
  bindings: Record<string, { HostIp?: string }[]>;
}> {
  let seen: { password: string; bindings: Record<string, { HostIp?: string }[]> } | null = null;
  const start = vi.spyOn(PostgreSqlContainer.prototype, 'start').mockImplementation(async function (
    this: PostgreSqlContainer,
  ) {
    const self = this as unknown as {
      password: string;
      hostConfig: { PortBindings?: Record<string, { HostIp?: string; HostPort: string }[]> };
    };
    seen = { password: self.password, bindings: self.hostConfig.PortBindings ?? {} };
    throw new Error('redteam2: stopped before starting a container');
  });
  const { createTestcontainersEngine } = await import('../../src/sandbox/testcontainers.js');
  await expect(createTestcontainersEngine({ image: 'postgres:16-alpine' })).rejects.toThrow(/redteam2/);
  start.mockRestore();
  if (!seen) throw new Error('the container was never started');
  return seen;
}

describe('red team 2: the testcontainers database server', () => {
  it('has a random superuser password, not the well-known test/test', async () => {
    const { password } = await containerConfig();
    expect(password).not.toBe('test');
    expect(password.length).toBeGreaterThanOrEqual(16);
  });

  it('publishes its port on the loopback only, not on every interface', async () => {
    const { bindings } = await containerConfig();
    expect(Object.keys(bindings).length).toBeGreaterThan(0);
    for (const list of Object.values(bindings))
      for (const b of list) expect(b.HostIp, 'published on every interface').toBe('127.0.0.1');
  });
});
