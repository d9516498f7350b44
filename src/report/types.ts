// report.json (DESIGN.md section 8, a contract: extend only additively).
import type { CaseClass } from '../config/schema.js';
import type { EngineName } from '../sandbox/types.js';
import type { FailureLabel, Side } from '../record.js';

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
}
