// Runs planned episodes on a fixed number of workers. Episodes of both sides share the workers
// (the plan interleaves them), so machine drift hits both sides alike.
import type { PlannedEpisode } from '../plan/expand.js';

export interface ScheduleOptions<T> {
  concurrency: number;
  signal?: AbortSignal;
  /** Called as each episode finishes, in completion order. */
  onDone?: (result: T, planned: PlannedEpisode, done: number, total: number) => void | Promise<void>;
}

/**
 * Runs `work` for every episode with at most `concurrency` at once. After an abort no new
 * episode starts; the ones running finish (their work sees the signal and stops its agent).
 * Returns the results of the episodes that ran, in plan order.
 */
export async function schedule<T>(
  episodes: PlannedEpisode[],
  work: (planned: PlannedEpisode) => Promise<T>,
  opts: ScheduleOptions<T>,
): Promise<{ results: (T | undefined)[]; started: number }> {
  const results: (T | undefined)[] = new Array(episodes.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < episodes.length && !opts.signal?.aborted) {
      const i = next++;
      const result = await work(episodes[i]);
      results[i] = result;
      done++;
      await opts.onDone?.(result, episodes[i], done, episodes.length);
    }
  };
  const n = Math.max(1, Math.min(opts.concurrency, episodes.length));
  await Promise.all(Array.from({ length: n }, worker));
  return { results, started: next };
}
