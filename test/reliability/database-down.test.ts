// The database failing mid-run: the embedded engine's server process is killed while an episode
// runs. The episodes it takes down are incomplete and say why, the verdict is not PASS, and the
// run still finishes and writes its report.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/model/report.js';
import { runCompare } from '../../src/run/pipeline.js';
import { agentSharedDir } from '../helpers/agent-dir.js';
import { kvSuite, readEpisodes } from './kv-suite.js';

/** The pids of this process's children whose command is `postgres` (the embedded server). */
function postgresChildren(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (comm === 'postgres' && ppid === process.pid) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** What the driver says when the server is gone. */
const CAUSE = /ECONNREFUSED|Connection terminated|terminating connection/;

const signals = agentSharedDir('sg-down-');
const running = join(signals, 'running');
const killed = join(signals, 'killed');
const dir = kvSuite({
  scenarios: ['first', 'second', 'third'],
  engine: 'embedded',
  concurrency: 1,
  // The first episode of scenario `first` says it is running and waits until the server is
  // killed; then every episode writes.
  agent: `
import { existsSync, writeFileSync } from 'node:fs';
if (process.env.STATEGATE_SCENARIO === 'first' && !existsSync(${JSON.stringify(killed)})) {
  writeFileSync(${JSON.stringify(running)}, '');
  const until = Date.now() + 60000;
  while (!existsSync(${JSON.stringify(killed)}) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}
const put = await call(url, 'put', { k: 'a', v: 'b' });
done({ put: put.status });
`,
  expect: `  - id: one-write
    query: SELECT count(*) FROM kv WHERE k = 'a'
    equals: 1
`,
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(signals, { recursive: true, force: true });
});

describe('the database server dying mid-run', () => {
  it('makes the affected cases incomplete, names the cause, and still reports', {
    timeout: 180_000,
  }, async () => {
    const out = join(dir, 'out');
    const run = runCompare({ base: dir, head: dir, repo: dir, out, engine: 'embedded' });
    // Its rejection is asserted below; until then it must not count as unhandled.
    run.catch(() => undefined);
    const until = Date.now() + 150_000;
    while (!existsSync(running) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    const servers = postgresChildren();
    expect(servers).toHaveLength(1);
    process.kill(servers[0], 'SIGKILL');
    writeFileSync(killed, '');

    // No episode could complete once the server was gone: the run could not run, says why, and
    // still writes its report.
    await expect(run).rejects.toThrow(/none of the 6 episodes completed/);
    await expect(run).rejects.toThrow(CAUSE);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as Report;
    expect(report.verdict).not.toBe('PASS');
    const first = report.cases.find((c) => c.id === 'first')!;
    expect(first.class).toBe('incomplete');
    expect(first.reason).toMatch(/could not be graded/);
    // The reason carries the cause, not only the count.
    expect(first.reason).toMatch(CAUSE);

    const episodes = readEpisodes(out);
    expect(episodes).toHaveLength(6);
    const down = episodes.filter((g) => g.record.infraError);
    // The episode running when the server died and every one after it.
    expect(down.length).toBeGreaterThanOrEqual(1);
    for (const g of down) {
      expect(g.passed).toBe(false);
      expect(g.record.infraError!.message).toMatch(CAUSE);
    }
    for (const c of report.cases) {
      const hit = down.some((g) => g.record.scenario === c.id);
      if (hit) expect(c.class).toBe('incomplete');
    }
    expect(existsSync(join(out, 'report.md'))).toBe(true);
  });
});
