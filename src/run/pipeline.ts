// The pipeline of `stategate compare`, `stategate run` and the action: base and head as a pinned
// pair. A run is a plan (run/plan.ts: everything decided before the first episode) carried out by
// the executor (run/execute.ts), in one resource scope that an interrupt cannot skip.
import type { CompareOptions, CompareResult } from './api.js';
import { executeRun } from './execute.js';
import { onInterrupt } from './interrupt.js';
import { prepareRun } from './plan.js';
import { ResourceScope } from './scope.js';

export { databaseFor } from './execute.js';

/** Runs the pair (or head alone when `base` is null), writes the reports, and returns them. */
export async function runCompare(opts: CompareOptions): Promise<CompareResult> {
  const progress = opts.onProgress ?? (() => undefined);
  const controller = new AbortController();
  const abort = () => controller.abort();
  opts.signal?.addEventListener('abort', abort);
  const stopInterrupt = onInterrupt(abort);
  const scope = new ResourceScope();
  try {
    const plan = await prepareRun(opts, scope, progress);
    return await executeRun(plan, { scope, signal: controller.signal, progress, options: opts });
  } finally {
    stopInterrupt();
    opts.signal?.removeEventListener('abort', abort);
    await scope.close();
  }
}
