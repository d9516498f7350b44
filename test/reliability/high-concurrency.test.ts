// `stategate run` at concurrency 64, as a user runs it from a CI log: no Node warning on stderr
// (64 episodes once put a listener each on one AbortSignal: MaxListenersExceededWarning), and a
// progress counter that shows every episode from 1 to the total, in order.
import { spawnSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EpisodeSignals } from '../../src/run/episode-signals.js';
import { ROOT } from '../helpers/demo-repo.js';
import { kvSuite, readEpisodes, TEST_DATABASE_URL } from './kv-suite.js';

const SCENARIOS = Array.from({ length: 16 }, (_, i) => `put-${String(i + 1).padStart(2, '0')}`);
const dir = kvSuite({
  scenarios: SCENARIOS,
  repeats: 4,
  concurrency: 64,
  agent: `const put = await call(url, 'put', { k: process.env.STATEGATE_SCENARIO, v: 'x' });\ndone({ put: put.status });`,
  expect: `  - id: one-row
    critical: true
    changes: { table: kv, inserted: 1 }
`,
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('64 episodes at once', () => {
  it('print no warning and count every episode in order', { timeout: 600_000 }, () => {
    const out = join(dir, 'out');
    const res = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        join(ROOT, 'src', 'cli', 'index.ts'),
        'run',
        '--dir',
        dir,
        '--out',
        out,
        '--engine',
        'postgres',
      ],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, CI: '1', STATEGATE_DATABASE_URL: TEST_DATABASE_URL },
        timeout: 570_000,
      },
    );
    expect(res.status, res.stderr).toBe(0);
    expect(res.stderr).toContain('64 at once');
    expect(res.stderr).not.toMatch(/Warning|\(node:\d+\)/);
    const counted = [
      ...res.stderr.matchAll(/^ {2}episodes (\d+)\/(\d+) {2}head (put-\d+): (pass|fail|not graded)$/gm),
    ];
    expect(counted.map((m) => Number(m[1]))).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
    expect(new Set(counted.map((m) => m[2]))).toEqual(new Set(['64']));
    expect(counted.every((m) => m[4] === 'pass')).toBe(true);
    // Every episode ran to its end (a warning alone would not fail a run).
    const episodes = readEpisodes(out);
    expect(episodes).toHaveLength(64);
    expect(episodes.filter((g) => g.passed)).toHaveLength(64);
  });
});

describe('EpisodeSignals', () => {
  it('keeps one listener on the run signal however many episodes hold one, and aborts them all', () => {
    const run = new AbortController();
    const signals = new EpisodeSignals(run.signal);
    const held = Array.from({ length: 100 }, () => signals.open());
    for (const h of held) h.signal.addEventListener('abort', () => undefined);
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
    held[0].release();
    run.abort('interrupted');
    expect(held.slice(1).every((h) => h.signal.aborted && h.signal.reason === 'interrupted')).toBe(true);
    // Released: no longer follows the run.
    expect(held[0].signal.aborted).toBe(false);
    const late = signals.open();
    expect(late.signal.aborted).toBe(true);
    expect(late.signal.reason).toBe('interrupted');
  });
});
