// report.json (DESIGN.md section 8, a contract: extend only additively).
import type { CaseClass } from '../config/schema.js';
import type { FailureLabel, Side } from '../record.js';
import type { EngineName } from '../sandbox/types.js';

export type GateVerdict = 'PASS' | 'WARN' | 'BLOCK';

export interface ExpectationCounts {
  pass: number;
  fail: number;
  error: number;
  critical: boolean;
  /** Additive: the failure labels seen, with counts. */
  labels?: Partial<Record<FailureLabel, number>>;
  /** Additive: one failure message, for the explanation. */
  example?: string;
}

/** Additive: one side's statistics on one scenario, over the repeats that could be graded. */
export interface SideStats {
  /** Repeats that could be graded (runs minus infraErrors). */
  n: number;
  /** Of those, the repeats that passed every expectation. */
  c: number;
  /** c / n; null when n is 0. */
  pass_rate: number | null;
  /** Passed every repeat, and every repeat could be graded. */
  all_n: boolean;
  /** Unbiased pass@k, by k; null when k > n. */
  pass_at_k: Record<string, number | null>;
  /** pass^k (every one of k repeats passes), by k; null when k > n. */
  pass_hat_k: Record<string, number | null>;
  /** Wilson 95% interval of the per-run pass rate; null when n is 0. */
  wilson: { low: number; high: number } | null;
}

/** Additive: one side's statistics over the suite, averaged over scenarios. */
export interface SuiteStats {
  /** Scenarios with at least one graded repeat on this side. */
  scenarios: number;
  /** Scenarios on this side with no graded repeat (left out of the averages). */
  excluded: number;
  pass_rate: number | null;
  /** The share of scenarios passed in every repeat. */
  all_n: number | null;
  pass_at_k: Record<string, number | null>;
  pass_hat_k: Record<string, number | null>;
}

export interface SideSummary {
  runs: number;
  /** Repeats in which every expectation passed. */
  passes: number;
  expectations: Record<string, ExpectationCounts>;
  /** Additive metrics, reported beside the class and never changing it. */
  metrics?: {
    toolCalls: number; // mean per episode
    latencyMs: number; // median agent wall time
    costUsd: number; // total
    inputTokens: number;
    outputTokens: number;
  };
  /** Repeats that could not be graded for reasons outside the agent. */
  infraErrors?: number;
  /** Episode ids, to find the records in episodes.jsonl. */
  episodes?: string[];
  /** Additive: pass rate, all-N, pass@k, pass^k and the Wilson interval. */
  stats?: SideStats;
}

export interface StateDifference {
  table: string;
  key: string;
  column: string;
  base: unknown;
  head: unknown;
}

export interface Divergence {
  kind: 'different-tool' | 'different-arguments' | 'different-result' | 'stopped-early' | 'same';
  step: number;
  sentence: string;
}

export interface ChangedExpectation {
  id: string;
  critical: boolean;
  change: 'broke' | 'fixed' | 'error';
  label?: FailureLabel;
  base: { pass: number; fail: number; error: number };
  head: { pass: number; fail: number; error: number };
  message?: string;
}

export interface CaseReport {
  id: string;
  class: CaseClass;
  flaky: { base: boolean; head: boolean };
  base: SideSummary | null;
  head: SideSummary | null;
  divergence: Divergence | null;
  state_diff: StateDifference[];
  /** Additive. */
  file?: string;
  description?: string;
  reason?: string;
  expectations_changed?: ChangedExpectation[];
  flaky_explanation?: { base?: string; head?: string };
  /** Additive: state differences left out of state_diff by its cap. */
  state_diff_cut?: number;
}

export interface Report {
  version: 1;
  verdict: GateVerdict;
  engine: EngineName;
  /** Additive: why that engine. */
  engine_reason?: string;
  pin: { suite_hash: string; template_hash: string; scenarios: Record<string, string> };
  sides: Record<Side, { ref: string; sha: string | null } | null>;
  counts: Record<CaseClass, number>;
  cases: CaseReport[];
  /** Additive. */
  repeats?: number;
  seeds?: Record<string, number[]>;
  shard?: { index: number; total: number } | null;
  interrupted?: boolean;
  gate?: { block: string[]; warn: string[] };
  started_at?: string;
  duration_ms?: number;
  /** Where the full per-episode records are (episodes.jsonl beside report.json). */
  episodes_file?: string;
  /** Additive: suite-level averages per side. */
  stats?: Partial<Record<Side, SuiteStats>>;
  /** Additive, merged reports: shard indexes (1-based) of the whole that no report covered. */
  missing_shards?: number[];
}
