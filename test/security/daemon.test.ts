// Attack: an agent leaves daemons behind (setsid(2), and a double fork under setsid(1)) that wait
// until the episode is over, then write into the checkout and over the run's report.json. They
// start (their first file appears) but die with the episode: nothing is written afterwards, the
// report is the harness's, and no process of theirs is left, on either engine.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { harnessNamespaceOptions, namespaceWrapper, probeIsolation } from '../../src/agent/namespace.js';
import { startAgentServer } from '../../src/agent/server.js';
import { fixtures as agentFixtures, freePort } from '../agent/helpers.js';
import { type AttackSuite, attackSuite, FIXTURES, processesWith, runAttack } from './attack-suite.js';

const DELAY_SECONDS = 3;
const suites: AttackSuite[] = [];
afterAll(() => {
  for (const s of suites) rmSync(s.dir, { recursive: true, force: true });
});

describe('an agent that leaves daemons behind', () => {
  for (const engine of ['embedded', 'postgres'] as const) {
    it(`takes them down with the episode on the ${engine} engine`, { timeout: 300_000 }, async () => {
      const token = `sg-daemon-${randomBytes(6).toString('hex')}`;
      const suite = attackSuite('daemonizer.mjs', { token, delaySeconds: DELAY_SECONDS, report: '' });
      suites.push(suite);
      const report = join(suite.dir, '.stategate', 'report.json');
      // The scenario is rewritten with the real path: the agent reads its context from it.
      const scenario = join(suite.dir, 'scenarios', 'attack.yaml');
      const text = readFileSync(scenario, 'utf8').replace(
        '"report":""',
        `"report":${JSON.stringify(report)}`,
      );
      writeFileSync(scenario, text);

      const { found, out } = await runAttack(suite, engine);
      expect(found.started).toEqual(['setsid', 'double-fork']);
      const written = readFileSync(join(out, 'report.json'), 'utf8');
      // Twice the daemons' delay after the episode ended.
      await sleep(2 * DELAY_SECONDS * 1000);
      expect(readdirSync(suite.drop).sort()).toEqual(['double-fork-started', 'setsid-started']);
      expect(existsSync(join(suite.drop, 'setsid-late'))).toBe(false);
      expect(readFileSync(join(out, 'report.json'), 'utf8')).toBe(written);
      expect(JSON.parse(written).verdict).not.toBeUndefined();
      expect(processesWith(token)).toEqual([]);
    });
  }

  it('takes them down with a harness killed by SIGKILL', { timeout: 120_000 }, async () => {
    const token = `sg-orphan-${randomBytes(6).toString('hex')}`;
    const suite = attackSuite('daemonizer.mjs', {});
    suites.push(suite);
    const up = join(suite.drop, 'up');
    const command = `setsid sh -c 'echo up > ${up}; sleep 300' ${token} & sh -c 'sleep 300' ${token}`;
    const harness = spawn(
      process.execPath,
      ['--import', 'tsx', join(FIXTURES, 'harness.mts'), suite.dir, command],
      {
        stdio: 'ignore',
      },
    );
    try {
      const until = Date.now() + 60_000;
      while (!existsSync(up) && Date.now() < until) await sleep(100);
      expect(existsSync(up)).toBe(true);
      expect(processesWith(token).length).toBeGreaterThan(0);
    } finally {
      // No exit hook runs on SIGKILL: only the kernel can take the agent down with the harness.
      harness.kill('SIGKILL');
    }
    const gone = Date.now() + 10_000;
    while (processesWith(token).length > 0 && Date.now() < gone) await sleep(100);
    expect(processesWith(token)).toEqual([]);
  });

  it("keeps an agent.serve daemon for the side's life and ends it with the side", {
    timeout: 120_000,
  }, async () => {
    const status = await probeIsolation();
    if (status.mode !== 'namespaces') throw new Error(`no namespaces here: ${status.reason}`);
    const token = `sg-serve-${randomBytes(6).toString('hex')}`;
    const suite = attackSuite('daemonizer.mjs', {});
    suites.push(suite);
    copyFileSync(join(agentFixtures, 'agent-server.mjs'), join(suite.dir, 'agent-server.mjs'));
    const port = await freePort();
    const server = await startAgentServer({
      // The server runs from the checkout: the repository's own files may be out of the agent's reach.
      serve: `setsid sh -c 'sleep 300' ${token} & exec node agent-server.mjs`,
      url: `http://127.0.0.1:${port}/`,
      cwd: suite.dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', AGENT_PORT: String(port) },
      logFile: join(suite.drop, 'serve.log'),
      healthTimeoutMs: 60_000,
      wrapper: namespaceWrapper(harnessNamespaceOptions(suite.dir, [], status.unshare, status.setpriv)),
    });
    try {
      expect(processesWith(token).length).toBeGreaterThan(0);
    } finally {
      await server.stop();
    }
    const gone = Date.now() + 10_000;
    while (processesWith(token).length > 0 && Date.now() < gone) await sleep(100);
    expect(processesWith(token)).toEqual([]);
  });
});
