// The attacks of allowlist-runner-layout.test.ts made by a served agent (agent.url + agent.serve: a
// long-lived server per side, which ran on the machine's network before): from its side's sandbox it
// hunts the job's token in /proc, appends to the runner's downloaded actions, tool cache, temp folder
// and HOME, scans all of loopback for database servers, and reads the token actions/checkout persists
// in .git/config; as root and on the hosted runner stand-in (runner with passwordless sudo, user
// namespaces refused). It must find and change nothing, while its tools still answer through the
// forwarded socket. And a head's agent.serve that poisons HOME and /tmp reaches its own server only.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GradedEpisode } from '../../src/model/episode.js';
import { runCompare } from '../../src/run/pipeline.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { asServed, attackSuite } from './attack-suite.js';
import { asRunner, JOB_TOKEN, persistCheckoutToken, RUNNER_UID, runnerLayout } from './runner-layout.js';

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

function reply(e: GradedEpisode, log = ''): any {
  const text = e.record.agent.result?.reply;
  if (text === undefined) throw new Error(`no result: ${e.record.agent.resultError}\n${log}`);
  return JSON.parse(text);
}

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** Runs the served hunter through the CLI with the runner's environment; `wrap` runs it as someone. */
function huntServed(engine: 'embedded' | 'postgres', asHostedRunner: boolean) {
  const layout = runnerLayout();
  cleanup.push(layout.root);
  const suite = attackSuite(
    'allowlist-hunter.mjs',
    { needles: layout.needles, targets: layout.targets, gitConfigs: ['.git/config'] },
    layout.workspaceParent,
  );
  asServed(suite);
  const gitConfig = persistCheckoutToken(suite.dir);
  if (asHostedRunner) execFileSync('chown', ['-R', `${RUNNER_UID}:${RUNNER_UID}`, layout.root]);
  const before = layout.targets.map(readOrNull);
  const configBefore = readFileSync(gitConfig, 'utf8');
  const out = join(suite.dir, '.stategate');
  const cli = [process.execPath, '--import', 'tsx', join(ROOT, 'src/cli/index.ts')];
  const args = [...cli, 'run', '--dir', suite.dir, '--engine', engine, '--out', out];
  // The harness has the runner's environment, as the action does: the tokens are in its /proc entries.
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...layout.env,
    STATEGATE_DATABASE_URL: TEST_DATABASE_URL,
  };
  const res = asHostedRunner
    ? spawnSync('/usr/bin/python3', asRunner(args), { cwd: ROOT, env, encoding: 'utf8', timeout: 280_000 })
    : spawnSync(args[0], args.slice(1), { cwd: ROOT, env, encoding: 'utf8', timeout: 280_000 });
  const said = res.stdout + res.stderr;
  const serverLog = readOrNull(join(out, 'agent-server-head.log')) ?? '';
  const [episode] = episodes(out);
  return {
    said,
    serverLog,
    found: reply(episode, `${said}\n${serverLog}`),
    layout,
    before,
    gitConfig,
    configBefore,
  };
}

function expectNothingFoundOrChanged(run: ReturnType<typeof huntServed>): void {
  const { found, layout, before } = run;
  expect(run.said).toContain('bubblewrap sandbox');
  expect(run.said).toContain('head: agent server (in its sandbox) on http://127.0.0.1:');
  expect(found.uid).toBe(65534);
  expect(found.procHits).toEqual([]);
  expect(found.pids).toBeLessThan(10);
  // The runner's folders are not even there, though anyone may write them on the host.
  expect(found.visible).toEqual([]);
  expect(found.wrote).toEqual([]);
  layout.targets.forEach((t, i) => {
    expect(readOrNull(t), t).toBe(before[i]);
  });
  // No port of loopback answers but its own server's and its tools' (through the forward).
  expect(found.open).toEqual([]);
  expect(found.reachesTools).toBe(true);
  expect(found.gitConfigHits).toEqual([]);
  expect(readFileSync(run.gitConfig, 'utf8')).toBe(run.configBefore);
  expect(run.configBefore).toContain(JOB_TOKEN);
  // The harness's HOME was not the server's.
  expect(readFileSync(join(layout.home, '.bashrc'), 'utf8')).toBe('# the runner user\n');
}

describe.runIf(asRoot)('a served head agent attacking a runner layout from its sandbox', () => {
  beforeAll(() => {
    // Idempotent: bubblewrap, sudo, python3-seccomp and the runner user (.ci/run runs it too).
    execFileSync(join(ROOT, 'scripts', 'runner-standin.sh'), { stdio: 'pipe' });
  });

  it('finds no token, writes nothing, reaches no server but its tools (harness as root, embedded engine)', () => {
    expectNothingFoundOrChanged(huntServed('embedded', false));
  });

  it('the same on the hosted runner stand-in: through sudo, user namespaces refused (postgres engine)', () => {
    const run = huntServed('postgres', true);
    expect(run.said).toContain('agent runs as uid 65534 (through sudo)');
    expectNothingFoundOrChanged(run);
  });

  it("cannot take over the harness's end of its sandbox through sudo: the tunnel's and the stop signals' sockets hang up on it", () => {
    const layout = runnerLayout();
    cleanup.push(layout.root);
    const suite = attackSuite('tunnel-hijacker.mjs', {}, layout.workspaceParent);
    asServed(suite);
    const config = join(suite.dir, 'stategate.yml');
    writeFileSync(config, readFileSync(config, 'utf8').replace('repeats: 1', 'repeats: 2'));
    execFileSync('chown', ['-R', `${RUNNER_UID}:${RUNNER_UID}`, layout.root]);
    const out = join(suite.dir, '.stategate');
    const args = [process.execPath, '--import', 'tsx', join(ROOT, 'src/cli/index.ts'), 'run'];
    args.push('--dir', suite.dir, '--engine', 'embedded', '--out', out, '--concurrency', '1');
    const res = spawnSync('/usr/bin/python3', asRunner(args), {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...layout.env },
      encoding: 'utf8',
      timeout: 280_000,
    });
    expect(res.stdout + res.stderr).toContain('agent runs as uid 65534 (through sudo)');
    const all = episodes(out);
    // Both episodes answered by the one server: nothing the agent said stopped or restarted it.
    expect(all).toHaveLength(2);
    const log = readFileSync(join(out, 'agent-server-head.log'), 'utf8');
    expect(log).not.toContain('restarting');
    for (const e of all) {
      const found = reply(e, log);
      const names = Object.keys(found.tried).map((p) => p.split('/').pop());
      // The tunnel's two sockets and the stop signals' socket are there to be tried.
      expect(names).toEqual(expect.arrayContaining(['tunnel.sock', 'data.sock', 'ctl.sock']));
      for (const name of ['tunnel.sock', 'ctl.sock', 'data.sock'])
        expect(found.tried[`/stategate/call/${name}`], name).toBe('closed by the harness');
      expect(found.reaches5432).toBe(false);
    }
  });

  it("a head's agent.serve that poisons HOME and /tmp reaches its own server, never the base's", async () => {
    const layout = runnerLayout();
    cleanup.push(layout.root);
    const base = attackSuite('home-poison-check.mjs', {}, layout.workspaceParent);
    const head = attackSuite('home-poison-check.mjs', {}, layout.workspaceParent);
    cleanup.push(base.dir, head.dir);
    asServed(base);
    asServed(
      head,
      'site=$(/usr/bin/python3 -m site --user-site) && mkdir -p "$site" && echo "import os; os._exit(3)" > "$site/stategate-poison.pth" && echo planted > /tmp/stategate-poison',
    );
    const out = join(layout.root, 'out');
    await runCompare({ base: base.dir, head: head.dir, repo: head.dir, out, engine: 'embedded' });
    const bySide = Object.fromEntries(episodes(out).map((e) => [e.record.side, reply(e)]));
    // The plant works where it belongs: the head's server and what it runs share HOME and /tmp.
    expect(bySide.head).toMatchObject({ pythonExit: 3, tmpPlant: true });
    expect(bySide.base).toMatchObject({ pythonExit: 0, tmpPlant: false });
    expect(bySide.base.home).not.toBe(layout.home);
  });
});
