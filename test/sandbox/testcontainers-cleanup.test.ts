// Without the reaper container (TESTCONTAINERS_RYUK_DISABLED), a run on the testcontainers engine
// removes its own container: killed with SIGTERM (ready or still starting) or exiting without close.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUN_LABEL } from '../../src/sandbox/testcontainers.js';
import { dockerApi, RUN_CONTAINER_TESTS, requireDocker } from '../helpers/docker.js';

const CHILD = join(import.meta.dirname, 'child-engine.ts');

/** Containers (running or not) whose run label says they belong to process `pid`. */
async function containersOf(pid: number): Promise<string[]> {
  const filters = encodeURIComponent(JSON.stringify({ label: [RUN_LABEL] }));
  const { status, body } = await dockerApi('GET', `/containers/json?all=1&filters=${filters}`);
  expect(status).toBe(200);
  return (body as { Id: string; Labels: Record<string, string> }[])
    .filter((c) => c.Labels[RUN_LABEL]?.startsWith(`${pid}-`))
    .map((c) => c.Id);
}

async function until<T>(what: string, deadlineMs: number, probe: () => Promise<T | null>): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const got = await probe();
    if (got !== null) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function startChild(args: string[]) {
  requireDocker();
  // DOCKER_HOST and TESTCONTAINERS_RYUK_DISABLED come from ../helpers/docker.js.
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'testcontainers', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const ended = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, ended, out: () => stdout, err: () => stderr };
}

async function ready(run: ReturnType<typeof startChild>): Promise<{ runPrefix: string }> {
  let done = false;
  void run.ended.then(() => (done = true));
  return until('the child to start its engine', 240_000, async () => {
    if (done) throw new Error(`the child ended before it started: ${run.err()}`);
    const line = run.out().split('\n')[0];
    return run.out().includes('\n') ? (JSON.parse(line) as { runPrefix: string }) : null;
  });
}

const pidOf = (child: ChildProcess) => child.pid!;

describe.runIf(RUN_CONTAINER_TESTS)('the testcontainers engine cleans up its own container', () => {
  it('on SIGTERM after it started: the process ends by the signal and no container of it remains', async () => {
    const run = startChild([]);
    await ready(run);
    const pid = pidOf(run.child);
    expect(await containersOf(pid)).toHaveLength(1);
    run.child.kill('SIGTERM');
    expect(await run.ended).toEqual({ code: null, signal: 'SIGTERM' });
    expect(await containersOf(pid)).toEqual([]);
  }, 300_000);

  it('on SIGTERM while the container is still starting', async () => {
    const run = startChild([]);
    const pid = pidOf(run.child);
    // The container exists (created) before the engine is ready: the signal comes in between.
    await until('the container to be created', 240_000, async () =>
      (await containersOf(pid)).length > 0 ? true : null,
    );
    expect(run.out()).toBe('');
    run.child.kill('SIGTERM');
    const end = await run.ended;
    expect(end.signal === 'SIGTERM' || end.code !== 0, JSON.stringify(end)).toBe(true);
    expect(await containersOf(pid)).toEqual([]);
  }, 300_000);

  it('on process.exit without closing the engine', async () => {
    const run = startChild(['', '--exit']);
    await ready(run);
    const pid = pidOf(run.child);
    expect(await run.ended).toEqual({ code: 3, signal: null });
    expect(await containersOf(pid)).toEqual([]);
  }, 300_000);
});
