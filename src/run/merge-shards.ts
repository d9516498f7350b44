// Joining shard reports into one, for `stategate merge` and the action's merge job alike: the gate is
// the stricter of this checkout's and each report's own (a report can tighten it, never loosen it),
// and the verdict is computed again from the cases.
import { mergeReports } from '../compare/index.js';
import { loadMergePolicy, stricterGate } from '../compare/merge-policy.js';
import type { Report } from '../model/report.js';

export interface MergeShardsOptions {
  /** The stategate.yml whose gate applies; undefined: stategate.yml in `cwd`, else the built-in default. */
  config: string | undefined;
  cwd: string;
  /** Why the merged report cannot be trusted (a fork's artifacts), when it cannot. */
  unverified?: string;
}

/** The merged report, and which policy gated it (for the log). */
export async function mergeShards(
  reports: readonly Report[],
  opts: MergeShardsOptions,
): Promise<{ report: Report; policySource: string }> {
  const policy = await loadMergePolicy(opts.config, opts.cwd);
  const report = mergeReports(reports, {
    gate: stricterGate(
      policy.gate,
      reports.map((r) => r.gate),
    ),
    unverified: opts.unverified,
  });
  return { report, policySource: policy.source };
}
