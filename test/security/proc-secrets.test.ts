// Attack: an agent walks /proc/*/environ and /proc/*/cmdline (and its own environment) for the
// harness's secrets: a token set in the harness's environment the way the action's inputs are,
// ACTIONS_RUNTIME_TOKEN, a database URL with a password, and the embedded server's admin password.
// It must find none, on either engine; and the embedded server itself holds none of them.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probeIsolation } from '../../src/agent/namespace.js';
import { startEmbeddedServer } from '../../src/sandbox/embedded-server.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { setEnvForFile } from '../helpers/process-env.js';
import { type AttackSuite, attackSuite, runAttack } from './attack-suite.js';

const ROOT = join(import.meta.dirname, '..', '..');

const CANARIES: Record<string, string> = {
  'INPUT_GITHUB-TOKEN': 'ghs_canaryInputTokenThatMustNotLeak',
  ACTIONS_RUNTIME_TOKEN: 'canary-actions-runtime-token',
  STATEGATE_DATABASE_URL: 'postgres://postgres:canary-admin-password@127.0.0.1:1/postgres',
  STATEGATE_CANARY_SECRET: 'canary-secret-in-the-harness-environment',
};
setEnvForFile(CANARIES);
const suites: AttackSuite[] = [];

afterAll(() => {
  for (const s of suites) rmSync(s.dir, { recursive: true, force: true });
});

/** This process's children whose command is `postgres`. */
function postgresChildren(): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return stat.includes('(postgres)') && ppid === process.pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('an agent searching /proc for the harness secrets', () => {
  it('runs with namespaces on this machine (the rest assumes it)', async () => {
    expect(await probeIsolation()).toMatchObject({ mode: 'namespaces' });
  });

  for (const engine of ['embedded', 'postgres'] as const) {
    it(`finds nothing on the ${engine} engine`, { timeout: 300_000 }, async () => {
      const suite = attackSuite('proc-walker.mjs', {
        needles: [...Object.values(CANARIES), 'canary-admin-password'],
      });
      suites.push(suite);
      const { found, report, episode } = await runAttack(suite, engine);
      expect(found.hits).toEqual([]);
      // Only its own namespace's processes: the agent, its init, the tools it ran.
      expect(found.pids).toBeLessThan(10);
      expect(found.readable).toBeGreaterThan(0);
      expect(episode.passed).toBe(true);
      expect(report.agent_isolation?.mode).toBe('namespaces');
    });
  }

  it('finds nothing in a harness started with the secrets in its real environment', {
    timeout: 300_000,
  }, async () => {
    // Deleting a variable from process.env leaves the kernel's copy in /proc/<pid>/environ: here the
    // harness (the CLI, as the action runs it) is started with the secrets, as a runner starts it.
    const suite = attackSuite('proc-walker.mjs', { needles: Object.values(CANARIES) });
    suites.push(suite);
    const out = join(suite.dir, '.stategate');
    const cli = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        join(ROOT, 'src/cli/index.ts'),
        'run',
        '--dir',
        suite.dir,
        '--engine',
        'postgres',
        '--out',
        out,
      ],
      {
        cwd: ROOT,
        env: { ...process.env, ...CANARIES, STATEGATE_DATABASE_URL: TEST_DATABASE_URL },
        encoding: 'utf8',
        timeout: 240_000,
      },
    );
    expect(cli.stdout + cli.stderr).toContain('agent isolation: PID and mount');
    const episode = JSON.parse(readFileSync(join(out, 'episodes.jsonl'), 'utf8').split('\n')[0]);
    const found = JSON.parse(episode.record.agent.result.reply);
    expect(found.hits).toEqual([]);
    expect(found.pids).toBeLessThan(10);
  });

  it('the embedded server holds no harness secret and no password in its environment or command line', async () => {
    const server = await startEmbeddedServer();
    try {
      const password = new URL(server.adminUrl).password;
      const [pid] = postgresChildren();
      expect(pid).toBeGreaterThan(0);
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      expect(environ.map((v) => v.split('=')[0]).sort()).toEqual(['LC_ALL', 'PATH']);
      for (const secret of [...Object.values(CANARIES), password]) {
        expect(environ.join('\n')).not.toContain(secret);
        expect(cmdline).not.toContain(secret);
      }
      // The password file initdb read is gone.
      expect(readdirSync(server.dir)).not.toContain('pwfile');
    } finally {
      await server.stop();
    }
  });
});
