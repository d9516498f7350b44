import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAgentEnv } from '../../src/agent/env.js';
import { runSetup } from '../../src/agent/setup.js';
import { scratchDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
const env = buildAgentEnv({ harnessEnv: process.env, env: { SETUP_MODE: 'ci' }, passEnv: [] });

beforeAll(async () => {
  ({ dir, cleanup } = await scratchDir());
});
afterAll(() => cleanup());

describe('runSetup', () => {
  it('runs in the checkout with the agent environment and keeps both streams in order', async () => {
    const r = await runSetup('echo "mode=$SETUP_MODE"; echo warn >&2; pwd', dir, env, 30_000);
    expect(r).toEqual({
      ok: true,
      exitCode: 0,
      signal: null,
      timedOut: false,
      output: `mode=ci\nwarn\n${dir}\n`,
    });
  });

  it('fails on a non-zero exit and says how', async () => {
    const r = await runSetup('echo "npm ERR! missing lockfile"; exit 2', dir, env, 30_000);
    expect(r.ok).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.error).toBe('exited with code 2');
    expect(r.output).toContain('npm ERR! missing lockfile');
  });

  it('gives a setup that waits for input end of file instead of a hang', async () => {
    const r = await runSetup('cat; echo read-done', dir, env, 30_000);
    expect(r.ok).toBe(true);
    expect(r.output).toBe('read-done\n');
  });

  it('times out a hanging setup', async () => {
    // Long enough for the shell to start and echo on a loaded machine; the sleep outlasts it anyway.
    const r = await runSetup('echo started; sleep 300', dir, env, 3000, { graceMs: 200 });
    expect(r.ok).toBe(false);
    expect(r.timedOut).toBe(true);
    expect(r.error).toBe('timed out after 3000 ms');
    expect(r.output).toBe('started\n');
  });

  it('caps its output', async () => {
    const r = await runSetup('yes line | head -c 200000; echo; echo last', dir, env, 30_000, {
      maxOutputBytes: 4096,
    });
    expect(r.ok).toBe(true);
    expect(r.output.endsWith('last\n')).toBe(true);
    expect(r.output.length).toBeLessThan(4200);
  });

  it('reports a missing checkout', async () => {
    const r = await runSetup('true', join(dir, 'gone'), env, 1000);
    expect(r.ok).toBe(false);
    expect(r.error).toBe(`could not start: working directory ${join(dir, 'gone')} does not exist`);
  });
});
