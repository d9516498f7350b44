// Bench 3: episodes per second of the whole pipeline with the trivial agent, base and head, at a
// given concurrency; and the harness's resident memory as the episodes go by.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ProgressEvent } from '../src/run/api.js';
import { runCompare } from '../src/run/compare.js';
import { ADMIN_URL, benchSuite } from './suite.js';

export interface ThroughputResult {
  concurrency: number;
  scenarios: number;
  repeats: number;
  episodes: number;
  seconds: number;
  perSecond: number;
  /** Highest RSS seen during the run, MiB. */
  peakRssMiB: number;
  /** RSS (MiB) when 10%, 25%, 50%, 75% and 100% of the episodes were done. */
  rssAt: { share: number; mib: number }[];
  verdict: string;
}

const MIB = 1024 * 1024;
const SHARES = [0.1, 0.25, 0.5, 0.75, 1];

/** Runs `scenarios` x `repeats` x 2 sides at `concurrency` and times the episodes phase. */
export async function throughput(
  scenarios: number,
  repeats: number,
  concurrency: number,
): Promise<ThroughputResult> {
  const suite = benchSuite(10, scenarios, repeats, concurrency);
  let start = 0;
  let end = 0;
  let peak = process.memoryUsage.rss();
  const rssAt: { share: number; mib: number }[] = [];
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 100);
  const onProgress = (e: ProgressEvent) => {
    if (e.type === 'phase' && e.phase === 'episodes') start = performance.now();
    if (e.type === 'episode') {
      end = performance.now();
      const next = SHARES[rssAt.length];
      if (next !== undefined && e.done >= Math.ceil(next * e.total)) {
        const rss = process.memoryUsage.rss();
        peak = Math.max(peak, rss);
        rssAt.push({ share: next, mib: rss / MIB });
      }
    }
  };
  try {
    const { report } = await runCompare({
      base: suite.dir,
      head: suite.dir,
      repo: suite.dir,
      out: join(suite.dir, 'out'),
      engine: 'postgres',
      databaseUrl: ADMIN_URL,
      onProgress,
    });
    const episodes = scenarios * repeats * 2;
    const seconds = (end - start) / 1000;
    return {
      concurrency,
      scenarios,
      repeats,
      episodes,
      seconds,
      perSecond: episodes / seconds,
      peakRssMiB: peak / MIB,
      rssAt,
      verdict: report.verdict,
    };
  } finally {
    clearInterval(sampler);
    rmSync(suite.dir, { recursive: true, force: true });
  }
}
