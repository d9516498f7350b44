// SIGTERM to stategate while agents hang in their containers (`--isolation container` on the
// command line, whatever the config says): no agent container is left behind, with no reaper.

import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/demo-repo.js';
import { AGENT_IMAGE, agentContainerIds, RUN_CONTAINER_TESTS, requireDocker } from '../helpers/docker.js';
import { kvSuite, TEST_DATABASE_URL } from '../reliability/kv-suite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.runIf(RUN_CONTAINER_TESTS)('stategate interrupted with agents in containers', () => {
  // One SIGTERM: the run stops its episodes and cleans up. Two: stategate exits at once, and its
  // exit hook removes what is left.
  it.each([1, 2])(
    'removes every agent container before it exits (%i SIGTERM)',
    { timeout: 300_000 },
    async (signals) => {
      requireDocker();
      const dir = kvSuite({
        scenarios: ['hang-a', 'hang-b'],
        // A daemon and a hang: only the container's end stops them.
        agent: `import { spawn } from 'node:child_process';
spawn('/bin/sh', ['-c', 'sleep 600'], { detached: true, stdio: 'ignore' }).unref();
setTimeout(() => {}, 600000);`,
        expect: '  - id: any\n    query: SELECT 1\n    equals: 1\n',
        timeout: '10m',
      });
      dirs.push(dir);
      chmodSync(dir, 0o755);
      // The config asks for process isolation; the command line overrides it.
      const config = readFileSync(join(dir, 'stategate.yml'), 'utf8');
      writeFileSync(
        join(dir, 'stategate.yml'),
        config.replace('  timeout:', `  image: ${AGENT_IMAGE}\n  timeout:`),
      );

      const tmp = mkdtempSync(join(tmpdir(), 'sg-interrupt-tmp-'));
      dirs.push(tmp);
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          join(ROOT, 'src', 'cli', 'index.ts'),
          'run',
          '--dir',
          dir,
          '--repo',
          dir,
          '--isolation',
          'container',
          '--engine',
          'postgres',
          '--out',
          join(dir, 'out'),
        ],
        {
          cwd: ROOT,
          env: { ...process.env, STATEGATE_DATABASE_URL: TEST_DATABASE_URL, TMPDIR: tmp },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (d) => {
        output += d;
      });
      child.stderr.on('data', (d) => {
        output += d;
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

      // Wait until both episodes' containers run.
      const deadline = Date.now() + 120_000;
      while ((await agentContainerIds(child.pid)).length < 2) {
        if (Date.now() > deadline) throw new Error(`no agent containers appeared:\n${output}`);
        await delay(250);
      }
      child.kill('SIGTERM');
      if (signals === 2) {
        await delay(100);
        child.kill('SIGTERM');
      }
      const code = await exited;
      expect(code, output).toBe(143);
      expect(await agentContainerIds(child.pid)).toEqual([]);
      // Nor the directories of its sockets.
      expect(readdirSync(tmp).filter((name) => name.startsWith('stategate-agent-'))).toEqual([]);
    },
  );
});
