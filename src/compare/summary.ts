// One side's repeats of one scenario, summed up: per-expectation counts, metrics and statistics.
import type { Scenario } from '../config/schema.js';
import { failureSignature } from '../grade/signature.js';
import type { FailureLabel, GradedEpisode } from '../model/episode.js';
import type { ExpectationCounts, SideCost, SideSummary } from '../model/report.js';
import { episodePassed, expectationsOf, inRepeatOrder, isGradable } from './episodes.js';
import { faultsFired } from './faults-fired.js';
import { sideStats } from './stats.js';

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/**
 * The ids of the scenario's `judge` expectations whose criterion is not in `calibrated` (the criteria
 * calibrated for the judge's model): their failures warn, never block.
 */
export function uncalibratedJudges(scenario: Scenario, calibrated: readonly string[] = []): Set<string> {
  const known = new Set(calibrated);
  const ids = new Set<string>();
  for (const e of scenario.expect) if ('judge' in e && !known.has(e.judge.criterion)) ids.add(e.id);
  return ids;
}

/**
 * Whether an expectation's error on this episode comes from what the agent left: not when the
 * harness stopped the repeat, nor when the judge failed to answer about a reply the agent gave.
 */
function agentCaused(episode: GradedEpisode, kind: string): boolean {
  if (episode.record.infraError) return false;
  return kind !== 'judge' || typeof episode.record.agent.result?.reply !== 'string';
}

function countExpectations(
  scenario: Scenario,
  episodes: GradedEpisode[],
  uncalibrated: ReadonlySet<string>,
): Record<string, ExpectationCounts> {
  const counts: Record<string, ExpectationCounts> = {};
  for (const e of expectationsOf(scenario)) {
    counts[e.id] = { pass: 0, fail: 0, error: 0, critical: e.critical };
    if (uncalibrated.has(e.id)) counts[e.id].uncalibrated = true;
  }
  const failExamples: Record<string, string> = {};
  const errorExamples: Record<string, string> = {};
  for (const episode of episodes) {
    for (const r of episode.results) {
      // A result the scenario does not list (another grader version) is still counted, as it says.
      counts[r.id] ??= { pass: 0, fail: 0, error: 0, critical: r.critical };
      const c = counts[r.id];
      c[r.verdict] += 1;
      if (r.verdict === 'pass') continue;
      if (r.label) {
        c.labels ??= {};
        c.labels[r.label as FailureLabel] = (c.labels[r.label as FailureLabel] ?? 0) + 1;
      }
      if (r.verdict === 'error' && agentCaused(episode, r.kind)) c.agentErrors = (c.agentErrors ?? 0) + 1;
      const examples = r.verdict === 'fail' ? failExamples : errorExamples;
      examples[r.id] ??= r.message;
    }
  }
  for (const [id, c] of Object.entries(counts)) {
    // A failure explains more than an evaluation error, so it is the example when both exist.
    const example = failExamples[id] ?? errorExamples[id];
    if (example !== undefined) c.example = example;
  }
  return counts;
}

/** Whether the side's episodes ran behind the model gateway: then their records, never their claims, count. */
function recorded(episodes: readonly GradedEpisode[]): boolean {
  return episodes.some((e) => e.record.modelCalls !== undefined);
}

/**
 * One episode's usage from the gateway's records (calls without a price give no cost_usd), or null
 * when it has no records. An agent's claimed `usage` never enters a side whose episodes are recorded.
 */
function recordedUsage(e: GradedEpisode): { input_tokens: number; output_tokens: number; cost_usd?: number } {
  const calls = e.record.modelCalls ?? [];
  const priced = calls.filter((c) => c.costUsd !== null);
  const usage = {
    input_tokens: calls.reduce((t, c) => t + (c.usage?.input_tokens ?? 0), 0),
    output_tokens: calls.reduce((t, c) => t + (c.usage?.output_tokens ?? 0), 0),
  };
  // A call whose cost is unknown (no price) leaves the episode's cost unknown: never reported as free.
  if (calls.some((c) => c.usage !== null && c.costUsd === null)) return usage;
  return { ...usage, cost_usd: priced.reduce((t, c) => t + (c.costUsd as number), 0) };
}

function metricsOf(episodes: GradedEpisode[]): SideSummary['metrics'] {
  // Episodes stopped by an error outside the agent would drag the numbers towards zero.
  const ran = episodes.filter((e) => !e.record.infraError);
  if (ran.length === 0) return undefined;
  const fromRecords = recorded(ran);
  const usage = ran.map((e) => (fromRecords ? recordedUsage(e) : (e.record.agent.result?.usage ?? {})));
  const sum = (pick: (u: (typeof usage)[number]) => number | undefined) =>
    usage.reduce((total, u) => total + (Number.isFinite(pick(u)) ? (pick(u) as number) : 0), 0);
  const reported = (pick: (u: (typeof usage)[number]) => number | undefined) =>
    usage.some((u) => Number.isFinite(pick(u)));
  const metrics: NonNullable<SideSummary['metrics']> = {
    toolCalls: round(ran.reduce((total, e) => total + e.record.calls.length, 0) / ran.length, 2),
    latencyMs: median(ran.map((e) => e.record.agent.durationMs)),
    costUsd: round(
      sum((u) => u.cost_usd),
      6,
    ),
    inputTokens: sum((u) => u.input_tokens),
    outputTokens: sum((u) => u.output_tokens),
  };
  // A sum of nothing is 0: say that nothing was reported rather than show `$0` and `0 tokens`.
  if (!reported((u) => u.cost_usd)) metrics.costUnreported = true;
  if (!reported((u) => u.input_tokens) && !reported((u) => u.output_tokens)) metrics.tokensUnreported = true;
  // Without records the numbers are the agent's own word: the report labels them so.
  if (!fromRecords && !(metrics.costUnreported && metrics.tokensUnreported)) metrics.claimed = true;
  if (fromRecords) metrics.modelCalls = ran.reduce((t, e) => t + (e.record.modelCalls?.length ?? 0), 0);
  return metrics;
}

/** The failed, gradable repeats counted by failure signature. */
export function signatureCounts(episodes: readonly GradedEpisode[]): SideSummary['signatures'] {
  const out: NonNullable<SideSummary['signatures']> = {};
  for (const e of episodes) {
    if (!isGradable(e)) continue;
    const signature = failureSignature(e);
    if (signature) out[signature] = (out[signature] ?? 0) + 1;
  }
  return out;
}

/** Cost per success of one side's repeats; undefined when no repeat reported cost_usd. */
export function sideCost(episodes: readonly GradedEpisode[]): SideCost | undefined {
  const fromRecords = recorded(episodes);
  const costs = episodes
    .map((e) => (fromRecords ? recordedUsage(e).cost_usd : e.record.agent.result?.usage?.cost_usd))
    .filter((c): c is number => typeof c === 'number' && Number.isFinite(c));
  if (costs.length === 0) return undefined;
  const total = round(
    costs.reduce((a, b) => a + b, 0),
    6,
  );
  const successes = episodes.filter(episodePassed).length;
  const dependable = episodes.length > 0 && episodes.every((e) => isGradable(e) && episodePassed(e));
  return {
    total_usd: total,
    successful_episodes: successes,
    per_successful_episode: successes === 0 ? null : round(total / successes, 6),
    per_dependable_case: dependable ? total : null,
  };
}

/**
 * Sums up one side's graded episodes of one scenario (an empty list gives a summary of zero runs);
 * `uncalibrated` marks judge expectations (see uncalibratedJudges).
 */
export function summarizeSide(
  scenario: Scenario,
  episodes: readonly GradedEpisode[],
  ks?: number[],
  uncalibrated: ReadonlySet<string> = new Set(),
): SideSummary {
  const ordered = inRepeatOrder(episodes);
  const infraErrors = ordered.filter((e) => !isGradable(e)).length;
  const summary: SideSummary = {
    runs: ordered.length,
    passes: ordered.filter(episodePassed).length,
    expectations: countExpectations(scenario, ordered, uncalibrated),
    infraErrors,
    episodes: ordered.map((e) => e.record.episode),
  };
  const provokedErrors = ordered.filter((e) => e.record.infraError?.provoked).length;
  if (provokedErrors > 0) summary.provokedErrors = provokedErrors;
  const metrics = metricsOf(ordered);
  if (metrics) summary.metrics = metrics;
  summary.stats = sideStats(summary, ks);
  summary.signatures = signatureCounts(ordered);
  const cost = sideCost(ordered);
  if (cost) summary.cost = cost;
  if (scenario.faults.length > 0) summary.faults_fired = faultsFired(scenario, ordered);
  return summary;
}
