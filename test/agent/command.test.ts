import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommandAgent } from '../../src/agent/command.js';
import { buildAgentEnv } from '../../src/agent/env.js';
import { fixtures, isRunning, scratchDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
const env = buildAgentEnv({ harnessEnv: process.env, env: {}, passEnv: [] });
const input = { message: 'Refund ORD-1001, please', context: { customer_id: 'CUS-1' } };

/** Runs a command as an agent with short limits (the defaults are for real agents). */
function run(command: string, extra: { timeoutMs?: number; maxOutputBytes?: number; message?: string } = {}) {
  return runCommandAgent({
    command,
    cwd: dir,
    env,
    input: extra.message === undefined ? input : { ...input, message: extra.message },
    timeoutMs: extra.timeoutMs ?? 30_000,
    graceMs: 300,
    maxOutputBytes: extra.maxOutputBytes,
  });
}

beforeAll(async () => {
  ({ dir, cleanup } = await scratchDir());
});
afterAll(() => cleanup());

describe('runCommandAgent', () => {
  it('runs a valid agent: input on stdin, result from the last line, logs kept', async () => {
    const r = await run(`node ${fixtures}echo-agent.mjs`);
    expect(r.exitCode).toBe(0);
    expect(r.timedOut).toBe(false);
    expect(r.resultError).toBeUndefined();
    expect(r.result?.outcome).toBe('SUCCESS');
    expect(r.result?.usage).toEqual({ input_tokens: 12, output_tokens: 34, cost_usd: 0.001 });
    expect(r.result?.tool_calls).toEqual([{ tool: 'lookup_order', args: { order_id: 'ORD-1' } }]);
    const seen = JSON.parse(r.result!.reply);
    expect(seen.input).toEqual(input);
    expect(seen.cwd).toBe(dir);
    expect(r.stdout).toContain('thinking about Refund ORD-1001, please');
    expect(r.stderr).toBe('a log line on stderr\n');
    expect(r.truncated).toBe(false);
  });

  it('reports exit 1 as the exit code, with the result it still printed', async () => {
    const r = await run(`echo '{"reply":"gave up"}'; exit 1`);
    expect(r.exitCode).toBe(1);
    expect(r.result).toEqual({ reply: 'gave up' });
  });

  it('reports an agent killed by SIGKILL', async () => {
    const direct = await run(`exec node -e "process.kill(process.pid, 'SIGKILL')"`);
    expect(direct.signal).toBe('SIGKILL');
    expect(direct.exitCode).toBeNull();
    expect(direct.resultError).toBe('stdout is empty: the agent printed no result');
    // Under a shell that does not exec, the shell reports 128 + 9.
    const viaShell = await run(`node -e "process.kill(process.pid, 'SIGKILL')"; exit $?`);
    expect(viaShell.exitCode).toBe(137);
  });

  it('reports an agent that printed nothing', async () => {
    const r = await run('exit 0');
    expect(r.exitCode).toBe(0);
    expect(r.result).toBeUndefined();
    expect(r.resultError).toBe('stdout is empty: the agent printed no result');
  });

  it('reports garbage output precisely', async () => {
    const r = await run(`echo '{"reply": "fine"}'; echo 'I refunded the order!'; echo; echo '   '`);
    expect(r.resultError).toBe('last line of stdout is not JSON: "I refunded the order!"');
  });

  it('reports a result that breaks the contract', async () => {
    const wrongOutcome = await run(`echo '{"reply":"ok","outcome":"DONE"}'`);
    expect(wrongOutcome.resultError).toBe(
      'last line of stdout: "outcome" must be one of SUCCESS, FAILURE, PARTIAL, ESCALATED, got "DONE"',
    );
    const noReply = await run(`echo '{"outcome":"SUCCESS"}'`);
    expect(noReply.resultError).toBe('last line of stdout: the result must have a string "reply", got none');
    const list = await run(`echo '[1,2]'`);
    expect(list.resultError).toBe('last line of stdout: the result must be a JSON object, got a list');
  });

  it('caps 10 MB of output per stream and still reads the last line', async () => {
    const r = await run(`node ${fixtures}flood-agent.mjs 10`);
    expect(r.exitCode).toBe(0);
    expect(r.truncated).toBe(true);
    expect(r.result).toEqual({ reply: 'done after the flood', outcome: 'PARTIAL' });
    // 1 MiB per stream plus the omission marker.
    expect(Buffer.byteLength(r.stdout)).toBeLessThan(1024 * 1024 + 100);
    expect(Buffer.byteLength(r.stderr)).toBeLessThan(1024 * 1024 + 100);
    expect(r.stdout).toMatch(/\[\.\.\. \d+ bytes omitted \.\.\.\]/);
  });

  it('says so when the last line itself is longer than the cap keeps', async () => {
    const r = await run(`node -e "process.stdout.write(JSON.stringify({reply: 'x'.repeat(5000)}) + '\\n')"`, {
      maxOutputBytes: 4096,
    });
    expect(r.truncated).toBe(true);
    expect(r.resultError).toBe('the last line of stdout is longer than the 2048 bytes the output cap keeps');
  });

  it('times out an infinite loop, escalating to SIGKILL when SIGTERM is ignored', async () => {
    const pidFile = join(dir, 'loop.pid');
    const loop = `require('fs').writeFileSync('${pidFile}', String(process.pid)); process.on('SIGTERM', () => {}); for (;;) {}`;
    // Long enough for node to start and write its pid even on a loaded machine.
    const r = await run(`exec node -e "${loop}"`, { timeoutMs: 8000 });
    expect(r.timedOut).toBe(true);
    expect(r.signal).toBe('SIGKILL');
    expect(r.resultError).toBe('stdout is empty: the agent printed no result');
    expect(isRunning(Number(await readFile(pidFile, 'utf8')))).toBe(false);
  });

  it('times out a loop under a shell, and the loop dies with the group', async () => {
    const pidFile = join(dir, 'loop-in-shell.pid');
    const loop = `require('fs').writeFileSync('${pidFile}', String(process.pid)); process.on('SIGTERM', () => {}); for (;;) {}`;
    const r = await run(`node -e "${loop}"; echo '{"reply":"never printed"}'`, { timeoutMs: 8000 });
    expect(r.timedOut).toBe(true);
    expect(r.result).toBeUndefined();
    expect(isRunning(Number(await readFile(pidFile, 'utf8')))).toBe(false);
  });

  it('kills children that outlive the agent', async () => {
    const pidFile = join(dir, 'child.pid');
    const r = await run(
      `node -e "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)" & echo $! > ${pidFile}; sleep 300 & echo '{"reply":"left children behind"}'`,
    );
    expect(r.exitCode).toBe(0);
    expect(r.result?.reply).toBe('left children behind');
    const pid = Number(await readFile(pidFile, 'utf8'));
    expect(pid).toBeGreaterThan(0);
    expect(isRunning(pid)).toBe(false);
  });

  it('survives an agent that never reads its (large) stdin', async () => {
    const r = await run(`echo '{"reply":"did not read"}'`, { message: 'x'.repeat(4 * 1024 * 1024) });
    expect(r.exitCode).toBe(0);
    expect(r.result).toEqual({ reply: 'did not read' });
  });

  it('kills a hanging agent that never reads stdin', async () => {
    const r = await run('sleep 300', { timeoutMs: 300, message: 'y'.repeat(1024 * 1024) });
    expect(r.timedOut).toBe(true);
    expect(r.resultError).toBe('stdout is empty: the agent printed no result');
  });

  it('returns a missing working directory as a fact, not a throw', async () => {
    const r = await runCommandAgent({ command: 'true', cwd: join(dir, 'nope'), env, input, timeoutMs: 1000 });
    expect(r.exitCode).toBeNull();
    expect(r.resultError).toBe(
      `the agent could not be started: working directory ${join(dir, 'nope')} does not exist`,
    );
  });

  it('stops the agent and its group when the signal aborts', async () => {
    const controller = new AbortController();
    const pidFile = join(dir, 'aborted.pid');
    const pending = runCommandAgent({
      command: `sleep 300 & echo $! > ${pidFile}; wait`,
      cwd: dir,
      env,
      input,
      timeoutMs: 60_000,
      graceMs: 300,
      signal: controller.signal,
    });
    // Abort once the agent is surely running: its child has written its pid.
    for (let i = 0; i < 200; i++) {
      const text = await readFile(pidFile, 'utf8').catch(() => '');
      if (text.trim()) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    controller.abort();
    const r = await pending;
    expect(r.timedOut).toBe(false);
    expect(r.resultError).toBe('the run was cancelled; stdout is empty: the agent printed no result');
    expect(isRunning(Number(await readFile(pidFile, 'utf8')))).toBe(false);
  });
});
