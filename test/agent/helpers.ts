// Shared bits of the agent tests: fixture paths, scratch directories, process liveness, free ports.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

/** A scratch directory, removed by the returned cleanup. */
export async function scratchDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'stategate-agent-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Whether a process is still running. A killed orphan stays a zombie until init reaps it, and
 * process.kill(pid, 0) succeeds on a zombie; a zombie runs nothing, so /proc settles it.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** A TCP port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The harness environment as a runner would have it: secrets included. */
export function runnerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME ?? '/root',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TZ: 'UTC',
    GITHUB_TOKEN: 'ghs_runnerTokenThatMustNotLeak',
    ACTIONS_RUNTIME_TOKEN: 'actions-runtime-token-value',
    ACTIONS_ID_TOKEN_REQUEST_URL: 'https://token.actions.example/request',
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'id-token-request-token-value',
    INPUT_FOO: 'an action input',
    INPUT_GITHUB_TOKEN: 'ghs_inputTokenThatMustNotLeak',
    RUNNER_TEMP: '/tmp/runner',
    NODE_OPTIONS: '--max-old-space-size=64',
    ...extra,
  };
}
