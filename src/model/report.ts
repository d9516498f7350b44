// report.json (docs/architecture.md, a contract: extend only additively).
import type { CaseClass, FailureSignature } from './classes.js';
import type { EngineName } from './engine.js';
import type { FailureLabel, Side } from './episode.js';

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
  /** Additive: a judge expectation whose criterion is not calibrated for the judge's model: its failures warn, never block. */
  uncalibrated?: true;
  /**
   * Additive: of `error`, the repeats where what the agent left (its final state, no reply for the
   * judge) could not be evaluated, as opposed to the harness stopping the repeat or the judge not
   * answering about a reply. Absent: none.
   */
  agentErrors?: number;
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
    /** Additive: no repeat reported usage.cost_usd, so costUsd is no measurement (shown as `—`). */
    costUnreported?: true;
    /** Additive: no repeat reported usage.input_tokens or output_tokens (shown as `—`). */
    tokensUnreported?: true;
    /**
     * Additive: cost and tokens are the agent's own `usage` claim (no model call went through the
     * model gateway); shown labelled "claimed". Absent: they come from the gateway's records.
     */
    claimed?: true;
    /** Additive: the model calls the gateway recorded, over the repeats (absent: none went through it). */
    modelCalls?: number;
    /** Additive: what the harness's user simulator cost over the repeats, apart from the agent's. */
    simulatorCostUsd?: number;
    /** Additive: what the harness's judge cost over the repeats, apart from the agent's. */
    judgeCostUsd?: number;
  };
  /** Repeats that could not be graded for reasons outside the agent. */
  infraErrors?: number;
  /** Additive: of those, repeats whose tool calls provoked a SQL error the twin does not declare. */
  provokedErrors?: number;
  /** Episode ids, to find the records in episodes.jsonl. */
  episodes?: string[];
  /** Additive: pass rate, all-N, pass@k, pass^k and the Wilson interval. */
  stats?: SideStats;
  /** Additive: the failed repeats counted by failure signature (the first signature that matches each). */
  signatures?: Partial<Record<FailureSignature, number>>;
  /** Additive: what the repeats cost per success; present only when the agent reported cost_usd. */
  cost?: SideCost;
  /**
   * Additive: each fault rule of the scenario (in its order) and in how many repeats it fired; a
   * rule that fired in no repeat is a finding (the scenario tested less than it says). Absent when
   * the scenario has no faults.
   */
  faults_fired?: FaultFired[];
}

/** Additive: one fault rule of a scenario and the repeats of a side in which it applied to a call. */
export interface FaultFired {
  /** 1-based, in the scenario's `faults` order. */
  rule: number;
  /** The tool the rule applies to (absent for a model rule). */
  tool?: string;
  /** Additive: the `models` entry a model rule applies to (absent for a tool rule). */
  model?: string;
  fault: string;
  repeats: number;
}

/**
 * Additive: cost per success of one side on one case. per_successful_episode is the total cost of all
 * repeats divided by the repeats that passed; per_dependable_case is the total cost of all repeats when
 * the case passed every repeat (a dependable case), else null.
 */
export interface SideCost {
  total_usd: number;
  successful_episodes: number;
  per_successful_episode: number | null;
  per_dependable_case: number | null;
}

/**
 * Additive: cost per success of one side over the suite. per_successful_episode is the total cost
 * divided by the passing repeats; per_dependable_case is the total cost divided by the cases that
 * passed every repeat. Only cases whose agent reported cost_usd count.
 */
export interface SuiteCost {
  cases: number;
  total_usd: number;
  successful_episodes: number;
  dependable_cases: number;
  per_successful_episode: number | null;
  per_dependable_case: number | null;
}

export interface StateDifference {
  table: string;
  key: string;
  column: string;
  base: unknown;
  head: unknown;
}

export interface Divergence {
  /** `different-turn` (additive): two conversations part at a call, a reply or their end. */
  kind:
    | 'different-tool'
    | 'different-arguments'
    | 'different-result'
    | 'stopped-early'
    | 'different-turn'
    | 'same';
  step: number;
  sentence: string;
}

export interface ChangedExpectation {
  id: string;
  critical: boolean;
  /** pre-existing (additive, adaptive repeats): both sides fail it at rates the test cannot tell apart. */
  change: 'broke' | 'fixed' | 'error' | 'pre-existing';
  label?: FailureLabel;
  base: { pass: number; fail: number; error: number };
  head: { pass: number; fail: number; error: number };
  message?: string;
  /** Additive, adaptive repeats: the sequential test's decision on this expectation and its p-value. */
  test?: { decision: 'worse' | 'not-worse' | 'undecided' | 'continue'; p: number | null };
  /** Additive: an uncalibrated judge expectation (see ExpectationCounts.uncalibrated). */
  uncalibrated?: true;
}

/** Additive: one call of a representative episode, as the tool's side recorded it. */
export interface StepReport {
  tool: string;
  /** Canonical arguments (keys sorted), cut to the report's value limits. */
  args: unknown;
  /** HTTP status the caller saw; 0 when the connection was dropped. */
  status: number;
  /** `applied`: the call changed the database; `replayed`: an idempotent replay with no second effect. */
  effect: 'applied' | 'replayed' | 'none';
  fault?: string;
  /** Rows a successful call returned, when it returned a list. */
  rows?: number;
  /** Additive, in a conversation: the agent turn the call was made in (its place among `turns`). */
  turn?: number;
  /** Additive: the error code the caller got beside a non-2xx status (`SLOT_TAKEN`). */
  code?: string;
}

/**
 * Additive: one turn of a conversation in the step table. Read with the steps' `turn`: the calls of
 * agent turn n come before the agent's turn n, which comes before the user's turn n + 1.
 */
export interface TurnReport {
  role: 'user' | 'agent';
  turn: number;
  /** Cut to TURN_TEXT_CAP characters. */
  text: string;
  /** User turns: the facts it gave. */
  facts?: string[];
}

/** Additive: the calls of the one episode that stands for a side in the step-by-step table. */
export interface EpisodeSteps {
  episode: string;
  repeat: number;
  /** How that episode was graded: why it was picked. */
  outcome: 'passed' | 'failed' | 'not graded';
  steps: StepReport[];
  /** Calls left out after the first STEPS_CAP. */
  steps_cut?: number;
  /** Additive: the conversation's turns, for an episode of a scenario with `user:`. */
  turns?: TurnReport[];
  /** Additive: how the conversation ended (see the episode record's `conversation.end`). */
  conversation_end?: string;
  /** Additive: what that episode's agent replied (cut to REPLY_CHARS), when it printed a result. */
  reply?: string;
  /** Additive: the outcome it claimed, when it claimed one. */
  claimed?: 'SUCCESS' | 'FAILURE' | 'PARTIAL' | 'ESCALATED';
}

/** Additive: how an agent ended when it crashed or printed no result, and the last lines of its stderr. */
export interface AgentStderr {
  episode: string;
  repeat: number;
  /** How it ended, e.g. `exited with code 1`, `timed out after 30000 ms`, `exited 0 and printed no valid result`. */
  ended: string;
  /** The last lines of stderr (bounded: see STDERR_TAIL); empty when it wrote none. */
  tail: string;
  /** Lines before the tail were left out. */
  cut?: true;
}

/** Where a scenario is written in its file: 1-based lines of its `id` and of each expectation's `id`. */
export interface ScenarioLines {
  scenario: number;
  expectations: Record<string, number>;
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
  /** Additive: the lines of `file` the scenario and its expectations are written at (annotations). */
  lines?: ScenarioLines;
  description?: string;
  reason?: string;
  expectations_changed?: ChangedExpectation[];
  flaky_explanation?: { base?: string; head?: string };
  /** Additive: state differences left out of state_diff by its cap. */
  state_diff_cut?: number;
  /** Additive: `table.column` of ignored columns (`ignore_columns`) whose values differed, left out of state_diff. */
  ignored_columns?: string[];
  /** Additive, adaptive repeats: how many episodes each side took and why the case stopped. */
  repeats_decision?: { base: number; head: number; reason: string };
  /** Additive, changed cases: the calls of one representative episode per side (base null: no base run). */
  steps?: { base: EpisodeSteps | null; head: EpisodeSteps };
  /** Additive: per side, the first repeat whose agent crashed or printed no result, with its stderr tail. */
  agent_stderr?: { base?: AgentStderr; head?: AgentStderr };
}

/** One reason for the verdict, e.g. `new-critical-failure: refund-timeout` at BLOCK. */
export interface GateReason {
  verdict: Exclude<GateVerdict, 'PASS'>;
  /** The gate class that matched, or null for a fact about the run. */
  class: string | null;
  cases: string[];
  text: string;
}

export interface Report {
  version: 1;
  verdict: GateVerdict;
  /** Additive: every reason for the verdict, as the gate gave them (none for PASS). */
  gate_reasons?: GateReason[];
  engine: EngineName;
  /** Additive: why that engine. */
  engine_reason?: string;
  pin: { suite_hash: string; template_hash: string; scenarios: Record<string, string> };
  /** `dirty` (additive): a directory with uncommitted changes ran, not the commit `sha` names. */
  sides: Record<Side, { ref: string; sha: string | null; dirty?: true } | null>;
  /** Additive: base and head are the same files (same git tree, or the same directory). */
  identical_sides?: true;
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
  /** Additive: adaptive repeats (min, max, and the level of each look of the sequential test). */
  repeats_policy?: { min: number; max: number; alpha: number };
  /** Additive: the repeats policy in force and its exact error rates (absent without a base). */
  repeats_rates?: RepeatsRates;
  /** Additive, fixed repeats: the observed flakiness that makes that N block unchanged agents > 5%. */
  repeats_warning?: RepeatsWarning;
  /** Additive: failed repeats by failure signature, summed over the cases, per side. */
  signatures?: Partial<Record<Side, Partial<Record<FailureSignature, number>>>>;
  /** Additive: cost per successful episode and per dependable case, per side. */
  cost?: Partial<Record<Side, SuiteCost>>;
  /** Additive, merged reports: shard indexes (1-based) of the whole that no report covered. */
  missing_shards?: number[];
  /** Additive, with a `judge:` section: the calibration the run read and the criteria it calibrates. */
  judge_calibration?: JudgeCalibrationFacts;
  /** Additive: whose stategate.yml the gate policy (gate, repeats floor, judge calibration) came from. */
  policy_from?: PolicySource;
  /** Additive: every difference of the suite that ran from the base's suite; absent when there is no base suite to compare. */
  suite_changes?: SuiteChange[];
  /**
   * Additive, merged reports: the run that produced the cases is not one the base repository controls
   * (a fork's artifact). Its cases were checked for consistency, not re-run; the check is neutral at best.
   */
  unverified?: { reason: string };
  /** Additive: how the agent's processes were kept from the harness, in one line. */
  agent_isolation?: AgentIsolationFacts;
  /** Additive, with a baseline cache (`--cache`, the action's `cache`): what of the base was reused. */
  baseline_cache?: BaselineCacheFacts;
  /** Additive, with `models`: what the agents' recorded model calls cost and what the budget cut. */
  model_spend?: ModelSpend;
  /**
   * Additive: the run graded only the scenarios `--scenario` / `--tag` selected, `selected` of the
   * pinned suite's `total`. Not a whole-suite run: its verdict is WARN at best, and so is a merge of it.
   */
  filter?: RunFilter;
  /** Additive: what a reader must know about a side's checkout (e.g. a ref ran, not the uncommitted working tree). */
  checkout_warnings?: CheckoutWarning[];
}

/** report.json `model_spend`: the run's recorded agent spend against `budget`. */
export interface ModelSpend {
  /** Both sides' recorded model calls, in USD (calls without a price count nothing). */
  agent_usd: number;
  /** budget.run_usd and budget.episode_usd, when set. */
  run_usd?: number;
  episode_usd?: number;
  /** Episodes that did not start because run_usd was spent. */
  episodes_cut: number;
  /** Model calls answered 429 budget_exceeded because their episode's episode_usd was spent. */
  calls_refused: number;
}

/** The scenario filter a run was given, as written, and how much of the suite it selected. */
export interface RunFilter {
  scenarios: string[];
  tags: string[];
  selected: number;
  total: number;
}

/** A warning about one side's checkout, as the run printed it. */
export interface CheckoutWarning {
  side: Side;
  text: string;
}

/** The base episodes a run took from the baseline cache, and whether it stored its own. */
export interface BaselineCacheFacts {
  /** sha256 of the key's parts: base tree, pinned suite, seeds, repeats, engine, stategate version. */
  key: string;
  /** At least one base episode was reused. */
  hit: boolean;
  reused_episodes: number;
  /** When the run that stored the reused episodes started (ISO 8601); null when nothing was reused. */
  stored_at: string | null;
  /** This run stored its base episodes under the key (for the next run). */
  saved: boolean;
  /** Why the entry was not used, or why this run's base was not stored. */
  note?: string;
}

/** Where the gate policy came from, and why from there. */
export interface PolicySource {
  /** `default`: the built-in policy, because the base's stategate.yml could not be loaded. */
  side: 'base' | 'head' | 'default';
  reason: string;
}

/** One difference between the base's suite and the suite that ran. */
export interface SuiteChange {
  kind:
    | 'scenario-added'
    | 'scenario-removed'
    | 'scenario-edited'
    | 'twin-added'
    | 'twin-removed'
    | 'twin-changed'
    | 'schema-changed'
    | 'fixtures-changed'
    | 'gate-changed'
    | 'repeats-changed'
    | 'judge-changed'
    | 'models-changed'
    | 'database-changed'
    | 'ignore-columns-changed';
  /** The scenario id, tool name, file or setting it is about. */
  subject: string;
  /** The change lets through something the base's suite would have caught (or cannot be shown not to). */
  weakens: boolean;
  /** One sentence, e.g. `scenario refund-twice: expectation no-double-refund removed`. */
  text: string;
}

/** Which judge verdicts may block: the model, the calibration file read (null: none) and its criteria. */
export interface JudgeCalibrationFacts {
  model: string;
  /** The calibration file, relative to the suite root; null when there was none. */
  file: string | null;
  sha256: string | null;
  /** The criteria calibrated for `model`; every other judge criterion is uncalibrated. */
  calibrated: string[];
}

/** report.json `repeats_rates`: the policy in force and its error rates. */
export interface RepeatsRates {
  /** Repeats per side: a fixed N has min = max = N. */
  min: number;
  max: number;
  adaptive: boolean;
  /** The policy is the built-in default (what a stategate.yml without `repeats` runs). */
  default: boolean;
  /** False BLOCK rate of an unchanged agent failing `fails` of its runs; absent when not computed. */
  false_block?: { fails: number; rate: number }[];
  /** Detection rate of a regression from `base` to `head` failure rate; absent when not computed. */
  detection?: { base: number; head: number; rate: number }[];
  /** Every false BLOCK rate <= 5% and every detection rate >= 90%; absent when not computed. */
  meets_targets?: boolean;
}

/** report.json `repeats_warning`: the flakiest critical expectation a fixed N saw, and what it costs. */
export interface RepeatsWarning {
  scenario: string;
  side: Side;
  expectation: string;
  /** Failures in the graded repeats of that side. */
  fails: number;
  runs: number;
  /** The false BLOCK rate at the fixed N of an unchanged agent failing fails/runs of its runs. */
  false_block: number;
}

/** How the agents were kept from the harness: report.json's agent_isolation. */
export interface AgentIsolationFacts {
  /** What the probe found here: namespaces (the sandbox's included) or process groups only. */
  mode: 'namespaces' | 'process-groups';
  /** The one line the log and the report carry. */
  note: string;
  /** Additive: what ran: the bubblewrap sandbox, the unshare namespaces, containers, or none. */
  ran?: 'sandbox' | 'namespaces' | 'container' | 'none';
  /** Additive: the agents' network: their own loopback, or the machine's (agent.network: host). */
  network?: 'own' | 'host';
  /** Additive: whether the agent had a uid of its own or the harness's. */
  uid?: 'own' | 'harness';
}
