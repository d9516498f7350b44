// Where nothing can isolate the agent (no root, no sudo, no user namespaces, no container runtime),
// the head's agent would run as the harness's user, with its files, tokens and network: it does not
// run, unless the base's stategate.yml says agent.isolation: none; a head cannot say so for itself.
// agent.network: host (the machine's network) is honoured from the base's config only, too. The
// report says which isolation ran, first. Stood in for with the hosted runner stand-in told not to
// use sudo (--sudo never): user namespaces refused, so bubblewrap and unshare cannot run.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GradedEpisode } from '../../src/model/episode.js';
import type { Report } from '../../src/model/report.js';
import { attackSuite } from './attack-suite.js';
import { asRunner, RUNNER_UID, runnerLayout } from './runner-layout.js';

const ROOT = join(import.meta.dirname, '..', '..');
const asRoot = process.getuid?.() === 0;
const cleanup: string[] = [];
let listener: Server;
let port = 0;

beforeAll(async () => {
  listener = createServer((s) => s.destroy());
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => listener.close(resolve));
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

/** Base and head checkouts of the port probe; `base` and `head` are lines added to each agent section. */
function pair(base: string, head: string) {
  const layout = runnerLayout();
  cleanup.push(layout.root);
  const sides = { base, head };
  const dirs = Object.fromEntries(
    Object.entries(sides).map(([side, extra]) => {
      const suite = attackSuite('port-probe.mjs', { port }, layout.workspaceParent);
      const config = join(suite.dir, 'stategate.yml');
      writeFileSync(
        config,
        readFileSync(config, 'utf8').replace('  timeout: 120s\n', `  timeout: 120s\n${extra}`),
      );
      return [side, suite.dir];
    }),
  ) as Record<'base' | 'head', string>;
  execFileSync('chown', ['-R', `${RUNNER_UID}:${RUNNER_UID}`, layout.root]);
  return { layout, dirs, out: join(layout.root, 'out') };
}

/** stategate compare as the hosted runner stand-in; `sudo` never leaves it no isolation at all. */
function compare(dirs: Record<'base' | 'head', string>, out: string, extra: string[] = []) {
  const args = [process.execPath, '--import', 'tsx', join(ROOT, 'src/cli/index.ts'), 'compare'];
  args.push('--base', dirs.base, '--head', dirs.head, '--engine', 'embedded', '--out', out, ...extra);
  const res = spawnSync('/usr/bin/python3', asRunner(args), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/home/runner' },
    encoding: 'utf8',
    timeout: 280_000,
  });
  return { status: res.status, said: res.stdout + res.stderr };
}

function replies(out: string): Record<string, { uid: number; reached: boolean }> {
  const episodes = readFileSync(join(out, 'episodes.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as GradedEpisode);
  return Object.fromEntries(episodes.map((e) => [e.record.side, JSON.parse(e.record.agent.result!.reply!)]));
}

describe.runIf(asRoot)('an agent nothing can isolate', () => {
  beforeAll(() => {
    execFileSync(join(ROOT, 'scripts', 'runner-standin.sh'), { stdio: 'pipe' });
  });

  it("does not run the head's agent when the base does not say agent.isolation: none", () => {
    const { dirs, out } = pair('', '  isolation: none\n');
    const run = compare(dirs, out, ['--sudo', 'never']);
    expect(run.status, run.said).toBe(1);
    expect(run.said).toContain("the head's agent cannot be isolated here");
    expect(run.said).toContain(
      "the head's agent.isolation: none is honoured from the base's stategate.yml only",
    );
    expect(existsSync(join(out, 'episodes.jsonl'))).toBe(false);
  });

  it('runs it as the harness user when the base says none, and the report says so first', () => {
    const { dirs, out } = pair('  isolation: none\n', '');
    const run = compare(dirs, out, ['--sudo', 'never']);
    expect(run.status, run.said).toBe(0);
    const found = replies(out);
    expect(found.head).toEqual({ uid: RUNNER_UID, reached: true });
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as Report;
    expect(report.agent_isolation).toMatchObject({
      mode: 'process-groups',
      ran: 'none',
      uid: 'harness',
      network: 'host',
    });
    const md = readFileSync(join(out, 'report.md'), 'utf8').split('\n');
    expect(md[3]).toMatch(/^\*\*agent isolation: none \(agent.isolation: none in the base's stategate.yml\)/);
  });

  it("gives the machine's network with agent.network: host from the base only, and says so", () => {
    const fromHead = pair('', '  network: host\n');
    const head = compare(fromHead.dirs, fromHead.out);
    expect(head.status, head.said).toBe(0);
    expect(head.said).toContain(
      "the head's agent.network: host is honoured from the base's stategate.yml only",
    );
    expect(replies(fromHead.out)).toEqual({
      base: { uid: 65534, reached: false },
      head: { uid: 65534, reached: false },
    });

    const fromBase = pair('  network: host\n', '');
    const base = compare(fromBase.dirs, fromBase.out);
    expect(base.status, base.said).toBe(0);
    expect(replies(fromBase.out)).toEqual({
      base: { uid: 65534, reached: true },
      head: { uid: 65534, reached: true },
    });
    const report = JSON.parse(readFileSync(join(fromBase.out, 'report.json'), 'utf8')) as Report;
    expect(report.agent_isolation).toMatchObject({ ran: 'sandbox', uid: 'own', network: 'host' });
    expect(report.agent_isolation?.note).toContain("agent network: the machine's (agent.network: host");
    const md = readFileSync(join(fromBase.out, 'report.md'), 'utf8').split('\n');
    expect(md[3]).toMatch(/^\*\*agent isolation: .*bubblewrap sandbox.*agent network: the machine's/);
  });
});
