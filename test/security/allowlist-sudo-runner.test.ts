// The attacks of allowlist-runner-layout.test.ts on a stand-in for GitHub's hosted runners: the
// harness runs as the user `runner` (uid 1001) with passwordless sudo, under a seccomp filter that
// refuses user namespaces the way Ubuntu 24.04's AppArmor does (fixtures/no-userns.py), in the
// runner's layout, owned by runner, with the job's token in its environment and in .git/config.
// Measured on the namespaces alone, an agent there found the token in 3 process entries, wrote into
// _actions, the tool cache and HOME, and reached 2 PostgreSQL servers; in the sandbox (through sudo)
// it must find and change nothing, while its tools still answer. And a harness killed by SIGKILL
// (sudo drops a parent-death signal) takes the agent and its daemon with it.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GradedEpisode } from '../../src/model/episode.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { attackSuite, FIXTURES } from './attack-suite.js';
import { asRunner, JOB_TOKEN, persistCheckoutToken, RUNNER_UID, runnerLayout } from './runner-layout.js';

const ROOT = join(import.meta.dirname, '..', '..');
const asRoot = process.getuid?.() === 0;
const cleanup: string[] = [];
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

describe.runIf(asRoot)(
  'a head agent attacking a hosted runner stand-in (runner with sudo, no user namespaces)',
  () => {
    beforeAll(() => {
      // Idempotent: bubblewrap, sudo, python3-seccomp and the runner user (.ci/run runs it too).
      execFileSync(join(ROOT, 'scripts', 'runner-standin.sh'), { stdio: 'pipe' });
    });

    it('the stand-in refuses user namespaces to runner and lets sudo make every namespace', () => {
      const probe = (cmd: string) =>
        spawnSync('/usr/bin/python3', asRunner(['sh', '-c', cmd]), { encoding: 'utf8' }).status;
      expect(probe('unshare -U true')).not.toBe(0);
      expect(probe('sudo -n unshare -m -p -n -f true')).toBe(0);
    });

    it('takes the agent and its daemon down with a harness killed by SIGKILL, through sudo too', async () => {
      const marker = 40_000 + Math.floor(Math.random() * 10_000);
      const running = () =>
        spawnSync('pgrep', ['-f', `^sleep (${marker}|${marker + 1})$`], { encoding: 'utf8' })
          .stdout.split('\n')
          .filter(Boolean).length;
      const harness = spawn(
        '/usr/bin/python3',
        asRunner([process.execPath, '--import', 'tsx', join(FIXTURES, 'sandbox-holder.mts'), String(marker)]),
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/home/runner' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let said = '';
      harness.stdout.on('data', (d: Buffer) => (said += d));
      const deadline = Date.now() + 120_000;
      while (running() < 2 && Date.now() < deadline) await delay(200);
      expect(said).toContain('via sudo');
      expect(running()).toBe(2);
      harness.kill('SIGKILL');
      const gone = Date.now() + 10_000;
      while (running() > 0 && Date.now() < gone) await delay(200);
      expect(running()).toBe(0);
    });

    for (const engine of ['postgres', 'embedded'] as const) {
      it(`finds no token, writes nothing, reaches no server but its tools (${engine} engine)`, () => {
        const layout = runnerLayout();
        cleanup.push(layout.root);
        const suite = attackSuite(
          'allowlist-hunter.mjs',
          { needles: layout.needles, targets: layout.targets, gitConfigs: ['.git/config'] },
          layout.workspaceParent,
        );
        const gitConfig = persistCheckoutToken(suite.dir);
        // Everything is the runner user's, as on a hosted runner.
        execFileSync('chown', ['-R', `${RUNNER_UID}:${RUNNER_UID}`, layout.root]);
        const before = layout.targets.map((t) => {
          try {
            return readFileSync(t, 'utf8');
          } catch {
            return null;
          }
        });
        const configBefore = readFileSync(gitConfig, 'utf8');
        const out = join(suite.dir, '.stategate');
        const cli = spawnSync(
          '/usr/bin/python3',
          asRunner([
            process.execPath,
            '--import',
            'tsx',
            join(ROOT, 'src/cli/index.ts'),
            'run',
            '--dir',
            suite.dir,
            '--engine',
            engine,
            '--out',
            out,
          ]),
          {
            cwd: ROOT,
            env: {
              PATH: process.env.PATH ?? '/usr/bin:/bin',
              ...layout.env,
              STATEGATE_DATABASE_URL: TEST_DATABASE_URL,
            },
            encoding: 'utf8',
            timeout: 280_000,
          },
        );
        expect(cli.stdout + cli.stderr).toContain('bubblewrap sandbox');
        expect(cli.stdout + cli.stderr).toContain('agent runs as uid 65534 (through sudo)');
        const [episode] = readFileSync(join(out, 'episodes.jsonl'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as GradedEpisode);
        const text = episode.record.agent.result?.reply;
        if (text === undefined)
          throw new Error(
            `no result: ${episode.record.agent.resultError}\n${episode.record.agent.stderr}\n${cli.stderr}`,
          );
        const found = JSON.parse(text);
        expect(found.procHits).toEqual([]);
        expect(found.pids).toBeLessThan(10);
        expect(found.visible).toEqual([]);
        expect(found.wrote).toEqual([]);
        layout.targets.forEach((t, i) => {
          let now: string | null = null;
          try {
            now = readFileSync(t, 'utf8');
          } catch {
            // Still absent.
          }
          expect(now, t).toBe(before[i]);
        });
        expect(found.open).toEqual([]);
        expect(found.reachesTools).toBe(true);
        expect(found.gitConfigHits).toEqual([]);
        expect(readFileSync(gitConfig, 'utf8')).toBe(configBefore);
        expect(configBefore).toContain(JOB_TOKEN);
      });
    }
  },
);
