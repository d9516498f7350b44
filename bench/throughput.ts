// Bench 3: episodes per second of the whole pipeline with the trivial agent, base and head, at a
// given concurrency; and the harness's memory as the episodes go by.
// Run alone: node --import tsx bench/throughput.ts [--concurrency 1,8] [--scenarios 100] [--repeats 2]
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ProgressEvent } from '../src/run/api.js';
import { runCompare } from '../src/run/pipeline.js';
import { benchArgs } from './args.js';
import { ADMIN_URL, benchSuite, episodeTimings, summary } from './suite.js';

/** The harness's memory when a share of the episodes was done. */
export interface MemorySample {
  share: number;
  /** V8 heap in use right after a forced full GC, MiB: what the run still holds (null without --expose-gc). */
  heapMiB: number | null;
  /** Resident set size, MiB (includes memory V8 and malloc keep for reuse). */
  rssMiB: number;
}

export interface ThroughputResult {
  concurrency: number;
  scenarios: number;
  repeats: number;
  episodes: number;
  seconds: number;
  perSecond: number;
  /** Highest RSS seen during the run, MiB. */
  peakRssMiB: number;
  /** Memory when 10%, 25%, 50%, 75% and 100% of the episodes were done. */
  memoryAt: MemorySample[];
  /** The episodes' wait for their database (timings.reset), ms: whether clones made ahead kept up. */
  reset: { median: number; p99: number };
  verdict: string;
}

const MIB = 1024 * 1024;
const SHARES = [0.1, 0.25, 0.5, 0.75, 1];

/** Median and p99 of timings.reset over episodes.jsonl. */
async function resetTimes(file: string): Promise<{ median: number; p99: number }> {
  const s = summary((await episodeTimings(file)).map((t) => t.reset ?? 0));
  return { median: s.median, p99: s.p99 };
}

/** Heap in use after a full GC (node --expose-gc), else null. */
function heapAfterGc(): number | null {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return null;
  gc();
  return process.memoryUsage().heapUsed / MIB;
}

/** Runs `scenarios` x `repeats` x 2 sides at `concurrency` and times the episodes phase. */
export async function throughput(
  scenarios: number,
  repeats: number,
  concurrency: number,
): Promise<ThroughputResult> {
  const suite = benchSuite(10, scenarios, repeats, concurrency);
  let start = 0;
  let end = 0;
  let paused = 0;
  let peak = process.memoryUsage.rss();
  const memoryAt: MemorySample[] = [];
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 100);
  const onProgress = (e: ProgressEvent) => {
    if (e.type === 'phase' && e.phase === 'episodes') start = performance.now();
    if (e.type === 'episode') {
      end = performance.now();
      const next = SHARES[memoryAt.length];
      if (next !== undefined && e.done >= Math.ceil(next * e.total)) {
        const rss = process.memoryUsage.rss();
        peak = Math.max(peak, rss);
        const t = performance.now();
        memoryAt.push({ share: next, heapMiB: heapAfterGc(), rssMiB: rss / MIB });
        // The forced GC is not the harness's time.
        paused += performance.now() - t;
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
    const reset = await resetTimes(join(suite.dir, 'out', 'episodes.jsonl'));
    const seconds = (end - start - paused) / 1000;
    return {
      concurrency,
      scenarios,
      repeats,
      episodes,
      seconds,
      perSecond: episodes / seconds,
      peakRssMiB: peak / MIB,
      memoryAt,
      reset,
      verdict: report.verdict,
    };
  } finally {
    clearInterval(sampler);
    rmSync(suite.dir, { recursive: true, force: true });
  }
}

/** Growth of the heap after GC from 25% to 100% of the episodes (the memory target's measure), or NaN. */
export function heapGrowth(r: ThroughputResult): number {
  const quarter = r.memoryAt.find((p) => p.share === 0.25)?.heapMiB ?? null;
  const last = r.memoryAt.at(-1)?.heapMiB ?? null;
  return quarter === null || last === null ? Number.NaN : (last - quarter) / quarter;
}

// Run alone: node --import tsx bench/throughput.ts [--scenarios 100] [--repeats 2] [--concurrency 1,8]
if (process.argv[1]?.endsWith('throughput.ts')) {
  const { arg } = benchArgs(import.meta.url, ['concurrency', 'scenarios', 'repeats']);
  const { loadavg } = await import('node:os');
  for (const c of arg('concurrency', '1,8').split(',').map(Number)) {
    const before = loadavg()[0];
    const r = await throughput(Number(arg('scenarios', '100')), Number(arg('repeats', '2')), c);
    console.log(
      `concurrency ${c}: ${r.episodes} episodes in ${r.seconds.toFixed(1)} s = ${r.perSecond.toFixed(2)} episodes/s; ` +
        `reset p50 ${r.reset.median.toFixed(1)} ms p99 ${r.reset.p99.toFixed(1)} ms; peak RSS ${r.peakRssMiB.toFixed(0)} MiB; ` +
        `${r.verdict}; load ${before.toFixed(1)} / ${loadavg()[0].toFixed(1)}`,
    );
  }
}
