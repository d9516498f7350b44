// Attack: the agent shares its uid and PID namespace with the sandbox's runner (its parent), so it
// may signal it: it stops the runner (SIGSTOP), leaves a child behind and exits. The runner then
// never reports the agent's exit; the harness must still end the episode (as a timeout) rather than
// hang, and leave nothing running.
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type AttackSuite, attackSuite, processesWith, runAttack } from './attack-suite.js';

const suites: AttackSuite[] = [];
afterAll(() => {
  for (const s of suites) rmSync(s.dir, { recursive: true, force: true });
});

describe('an agent that stops its runner', () => {
  it('ends as an ordinary timed-out episode, nothing left running', { timeout: 60_000 }, async () => {
    const marker = `sg-stop-runner-${randomBytes(6).toString('hex')}`;
    const suite = attackSuite('whoami.mjs', {});
    suites.push(suite);
    writeFileSync(
      join(suite.dir, 'agent.mjs'),
      `
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
readFileSync(0, 'utf8');
spawn('/bin/sh', ['-c', 'sleep 60; true', '${marker}'], { detached: true, stdio: 'ignore' }).unref();
process.stdout.write(JSON.stringify({ reply: JSON.stringify({ ppid: process.ppid }) }) + '\\n');
// The runner is the shell's parent (or this process's, when the shell exec'd node).
const stat = (pid) => readFileSync('/proc/' + pid + '/stat', 'utf8');
const cmd = (pid) => readFileSync('/proc/' + pid + '/cmdline', 'utf8');
let runner = process.ppid;
if (!cmd(runner).includes('runner.js')) runner = Number(stat(runner).slice(stat(runner).lastIndexOf(')') + 2).split(' ')[1]);
process.kill(runner, 'SIGSTOP');
`,
    );
    const config = join(suite.dir, 'stategate.yml');
    writeFileSync(config, readFileSync(config, 'utf8').replace('timeout: 120s', 'timeout: 3s'));
    const { episode } = await runAttack(suite, 'postgres').catch(async (err) => {
      // A result-less episode still counts as ended: read it from the log.
      const line = readFileSync(join(suite.dir, '.stategate', 'episodes.jsonl'), 'utf8').split('\n')[0];
      if (!line) throw err;
      return { episode: JSON.parse(line) };
    });
    expect(episode.record.agent.timedOut).toBe(true);
    expect(episode.passed).toBe(false);
    expect(processesWith(marker)).toEqual([]);
  });
});
