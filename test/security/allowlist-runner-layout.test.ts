// The attacks of a head's agent on a CI runner, against the bubblewrap sandbox with the harness as
// root and the runner's layout around it (runner-layout.ts): it hunts the job's token in /proc,
// appends to the runner's downloaded actions, tool cache, temp folder and HOME, scans every port of
// loopback (the PostgreSQL server on 5432, the embedded engine's, the harness's), and reads the
// token actions/checkout persisted in .git/config. It must find and change nothing, while its tools
// still answer. And a head's agent.setup that poisons HOME and /tmp reaches its own episodes only,
// never the base's.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probeIsolation } from '../../src/agent/namespace.js';
import type { GradedEpisode } from '../../src/model/episode.js';
import { runCompare } from '../../src/run/pipeline.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { attackSuite } from './attack-suite.js';
import { JOB_TOKEN, persistCheckoutToken, runnerLayout } from './runner-layout.js';

const ROOT = join(import.meta.dirname, '..', '..');
const asRoot = process.getuid?.() === 0;
const cleanup: string[] = [];
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

function episodes(out: string): GradedEpisode[] {
  return readFileSync(join(out, 'episodes.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as GradedEpisode);
}

function reply(e: GradedEpisode): any {
  const text = e.record.agent.result?.reply;
  if (text === undefined)
    throw new Error(`no result: ${e.record.agent.resultError}\n${e.record.agent.stderr}`);
  return JSON.parse(text);
}

describe.runIf(asRoot)('a head agent attacking a runner layout from the sandbox (harness as root)', () => {
  it('runs in the bubblewrap sandbox here (the rest is about it)', async () => {
    const status = await probeIsolation();
    expect(status).toMatchObject({ mode: 'namespaces', sandbox: { via: 'root' } });
  });

  for (const engine of ['embedded', 'postgres'] as const) {
    it(`finds no token, writes nothing, reaches no server but its tools (${engine} engine)`, async () => {
      const layout = runnerLayout();
      cleanup.push(layout.root);
      const before = layout.targets.map((t) => {
        try {
          return readFileSync(t, 'utf8');
        } catch {
          return null;
        }
      });
      const suite = attackSuite(
        'allowlist-hunter.mjs',
        { needles: layout.needles, targets: layout.targets, gitConfigs: ['.git/config'] },
        layout.workspaceParent,
      );
      const gitConfig = persistCheckoutToken(suite.dir);
      const configBefore = readFileSync(gitConfig, 'utf8');
      const out = join(suite.dir, '.stategate');
      // The harness is started with the runner's environment, as the action is: the tokens are in
      // its /proc entries for the whole run.
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
          engine,
          '--out',
          out,
        ],
        {
          cwd: ROOT,
          env: { ...process.env, ...layout.env, STATEGATE_DATABASE_URL: TEST_DATABASE_URL },
          encoding: 'utf8',
          timeout: 280_000,
        },
      );
      expect(cli.stdout + cli.stderr).toContain('bubblewrap sandbox');
      const [episode] = episodes(out);
      const found = reply(episode);
      expect(found.procHits).toEqual([]);
      expect(found.pids).toBeLessThan(10);
      // The runner's folders are not even there, though anyone may write them on the host.
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
      // Every port of loopback but its tools' is closed; the tools answer through the forward.
      expect(found.open).toEqual([]);
      expect(found.reachesTools).toBe(true);
      // The checkout's git config is there without the persisted token; the real one is untouched.
      expect(found.gitConfigHits).toEqual([]);
      expect(readFileSync(gitConfig, 'utf8')).toBe(configBefore);
      expect(configBefore).toContain(JOB_TOKEN);
      expect(episode.record.agent.stderr).toBe('');
    });
  }

  it("a head's agent.setup that poisons HOME and /tmp reaches its own side, never the base", async () => {
    const layout = runnerLayout();
    cleanup.push(layout.root);
    const base = attackSuite('home-poison-check.mjs', {}, layout.workspaceParent);
    const head = attackSuite('home-poison-check.mjs', {}, layout.workspaceParent);
    cleanup.push(base.dir, head.dir);
    const config = join(head.dir, 'stategate.yml');
    writeFileSync(
      config,
      readFileSync(config, 'utf8').replace(
        '  command:',
        '  setup: site=$(/usr/bin/python3 -m site --user-site) && mkdir -p "$site" && echo "import os; os._exit(3)" > "$site/stategate-poison.pth" && echo planted > /tmp/stategate-poison\n  command:',
      ),
    );
    const out = join(layout.root, 'out');
    await runCompare({ base: base.dir, head: head.dir, repo: head.dir, out, engine: 'embedded' });
    const bySide = Object.fromEntries(episodes(out).map((e) => [e.record.side, reply(e)]));
    // The plant works where it belongs: the head's setup and episodes share HOME and /tmp.
    expect(bySide.head).toMatchObject({ pythonExit: 3, tmpPlant: true });
    expect(bySide.base).toMatchObject({ pythonExit: 0, tmpPlant: false });
    // Neither side's HOME is the harness's.
    expect(bySide.base.home).not.toBe(layout.home);
    expect(readFileSync(join(layout.home, '.bashrc'), 'utf8')).toBe('# the runner user\n');
  });
});
