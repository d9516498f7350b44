// Sandboxes started ahead (SideSandbox.keepReady): the next episode's sandbox runs before its
// episode is known. What must hold: each episode still gets its own spec (command, environment)
// and nothing else; a sandbox that is no longer the one its episode would get (a folder hidden
// since, a checkout entry added since) is never handed out; one whose runner died is not either;
// and none outlives the side.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommandAgent } from '../../src/agent/command.js';
import { buildAgentEnv } from '../../src/agent/env.js';
import { probeIsolation } from '../../src/agent/namespace.js';
import { type SandboxStatus, SideSandbox } from '../../src/agent/sandbox.js';
import { isRunning } from './helpers.js';

const asRoot = process.getuid?.() === 0;
const env = buildAgentEnv({ harnessEnv: process.env, env: {}, passEnv: [] });
let status: SandboxStatus;
let parent: string;

beforeAll(async () => {
  const probed = await probeIsolation();
  // The sandbox is what this file tests: without bubblewrap it fails rather than skips.
  if (probed.mode !== 'namespaces' || !probed.sandbox)
    throw new Error(`no bubblewrap sandbox here: ${JSON.stringify(probed)}`);
  status = probed.sandbox;
  parent = mkdtempSync(join(tmpdir(), 'stategate-ready-'));
  chmodSync(parent, 0o755);
});
afterAll(() => rmSync(parent, { recursive: true, force: true }));

/** A checkout of its own (mode 0755, or `mode`) with one file. */
function checkout(name: string, mode = 0o755): string {
  const dir = join(parent, name);
  mkdirSync(dir, { mode });
  chmodSync(dir, mode);
  writeFileSync(join(dir, 'hello.txt'), 'hello\n', { mode: 0o644 });
  return dir;
}

/** The pids of processes whose command line names `text` (a ready sandbox names its call folder). */
function pidsNaming(text: string): number[] {
  const pids: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(text) && isRunning(Number(p)))
        pids.push(Number(p));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/** The call folders of a side (one per sandbox started ahead or running). */
const calls = (sandbox: SideSandbox) => readdirSync(join(sandbox.dir, 'calls'));

/** Waits until the side has a sandbox started ahead whose runner is up (its call folder has go.sock). */
async function readyStarted(sandbox: SideSandbox): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const call = calls(sandbox).find((c) => readdirSync(join(sandbox.dir, 'calls', c)).includes('go.sock'));
    if (call && pidsNaming(call).length > 0) {
      await delay(300); // its runner's Node start
      return call;
    }
    await delay(25);
  }
  throw new Error('no sandbox was started ahead');
}

/** One episode whose agent is `command`, in `sandbox`. */
function episode(sandbox: SideSandbox, dir: string, command: string, extra: Record<string, string> = {}) {
  return runCommandAgent({
    command,
    cwd: dir,
    env: { ...env, ...extra },
    input: { message: 'hi', context: {} },
    timeoutMs: 30_000,
    graceMs: 300,
    wrapper: sandbox,
  });
}

describe('sandboxes started ahead', () => {
  it('hand each episode its own command and environment, read only once it is known', {
    timeout: 60_000,
  }, async () => {
    const dir = checkout('own-spec');
    const sandbox = new SideSandbox({ checkout: dir, hide: () => [], status });
    try {
      sandbox.keepReady(1, env);
      const call = await readyStarted(sandbox);
      // Up and waiting, with no spec yet: nothing of an episode is in there before it starts.
      expect(readdirSync(join(sandbox.dir, 'calls', call))).toEqual(['go.sock']);
      for (const n of ['1', '2', '3']) {
        const r = await episode(
          sandbox,
          dir,
          `printf '{"reply":"%s %s"}\\n' "$EPISODE_MARK" "$(cat hello.txt)"`,
          { EPISODE_MARK: `episode-${n}` },
        );
        expect(r.resultError).toBeUndefined();
        expect(r.result?.reply).toBe(`episode-${n} hello`);
      }
      // The first episode took the one started ahead; its call folder went with it.
      expect(calls(sandbox)).not.toContain(call);
    } finally {
      await sandbox.close();
    }
  });

  it('never hand out a sandbox that misses a folder hidden since it started', {
    timeout: 60_000,
  }, async () => {
    const dir = checkout('hidden-since');
    const hidden: string[] = [];
    const sandbox = new SideSandbox({ checkout: dir, hide: () => hidden, status });
    try {
      sandbox.keepReady(1, env);
      const call = await readyStarted(sandbox);
      // The run's folder inside the checkout, with a secret, is hidden only now.
      const secretDir = join(dir, '.stategate');
      mkdirSync(secretDir);
      writeFileSync(join(secretDir, 'token'), 'SECRET-TOKEN\n', { mode: 0o644 });
      chmodSync(secretDir, 0o755);
      hidden.push(secretDir);
      const r = await episode(
        sandbox,
        dir,
        `printf '{"reply":"%s"}\\n' "$(cat .stategate/token 2>/dev/null || echo unreadable)"`,
      );
      expect(r.result?.reply).toBe('unreadable');
      // The stale one was stopped, not left waiting.
      expect(pidsNaming(call)).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });

  it.runIf(asRoot)(
    'never hand out a sandbox that misses a checkout entry added since it started (a checkout only root may enter)',
    { timeout: 60_000 },
    async () => {
      // Closed to the agent's uid: the sandbox binds each entry, so the set of entries is its own.
      const dir = checkout('entry-added', 0o700);
      const sandbox = new SideSandbox({ checkout: dir, hide: () => [], status });
      try {
        sandbox.keepReady(1, env);
        await readyStarted(sandbox);
        writeFileSync(join(dir, 'late.txt'), 'late\n', { mode: 0o644 });
        const r = await episode(sandbox, dir, `printf '{"reply":"%s"}\\n' "$(cat late.txt)"`);
        expect(r.result?.reply).toBe('late');
      } finally {
        await sandbox.close();
      }
    },
  );

  it('do not hand out one killed a moment ago, before its exit event has run', {
    timeout: 60_000,
  }, async () => {
    const dir = checkout('died-unseen');
    const sandbox = new SideSandbox({ checkout: dir, hide: () => [], status });
    try {
      sandbox.keepReady(1, env);
      const call = await readyStarted(sandbox);
      const pid = Math.min(...pidsNaming(call));
      process.kill(-pid, 'SIGKILL');
      // No turn of the event loop from the kill to the hand-out: Node has not reaped the child, so
      // only the kernel knows it is gone (the race a loaded machine hits between two episodes).
      const tick = new Int32Array(new SharedArrayBuffer(4));
      for (let i = 0; i < 400 && isRunning(pid); i++) Atomics.wait(tick, 0, 0, 5);
      expect(isRunning(pid)).toBe(false);
      const wrapped = sandbox.wrap('true', env);
      expect(wrapped.child?.pid).not.toBe(pid);
      wrapped.done?.();
    } finally {
      await sandbox.close();
    }
  });

  it('do not hand out one whose runner died, and leave no process when the side closes', {
    timeout: 60_000,
  }, async () => {
    const dir = checkout('died-and-closed');
    const sandbox = new SideSandbox({ checkout: dir, hide: () => [], status });
    try {
      sandbox.keepReady(1, env);
      const call = await readyStarted(sandbox);
      const [pid] = pidsNaming(call);
      process.kill(-pid, 'SIGKILL');
      for (let i = 0; i < 100 && isRunning(pid); i++) await delay(20);
      const r = await episode(sandbox, dir, `printf '{"reply":"ran"}\\n'`);
      expect(r.result?.reply).toBe('ran');
      const next = await readyStarted(sandbox);
      expect(next).not.toBe(call);
      await sandbox.close();
      for (let i = 0; i < 40 && pidsNaming(next).length > 0; i++) await delay(50);
      expect(pidsNaming(next)).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });
});
