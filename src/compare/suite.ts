// The one assembly of report.json from a run: every case compared (compareCase), the facts of the
// run beside them, and the totals and the gate's verdict with its reasons (withTotals). `compare`,
// `run`, the action and the tests all build their reports here; `merge` joins reports with the same
// totals. Cases may arrive one at a time (a generator reading each case back from disk), so a run of
// any size holds only the compared cases, never its episodes.
import type { GatePolicy } from '../model/classes.js';
import type { Side } from '../model/episode.js';
import type { ModelSpend, Report } from '../model/report.js';
import type { EngineName } from '../sandbox/types.js';
import { LOOK_ALPHA } from '../stats/sequential.js';
import { type CaseInput, type CaseOptions, compareCase } from './case.js';
import { type ReportBody, withTotals } from './totals.js';

/** Everything a report is made of besides the cases. */
export interface ReportFacts {
  pin: Report['pin'];
  sides: Report['sides'];
  engine: EngineName;
  engineReason?: string;
  gate?: GatePolicy;
  repeats?: number;
  /**
   * The seeds each side ran per scenario (`side:scenario`), or `episodes` to take them from the cases'
   * episodes as they are compared.
   */
  seeds?: Record<string, number[]> | 'episodes';
  shard?: { index: number; total: number } | null;
  interrupted?: boolean;
  /** ISO time the run started (passed in: building a report reads no clock). */
  startedAt?: string;
  durationMs?: number;
  episodesFile?: string;
  /** Base and head are the same files. */
  identicalSides?: boolean;
  policyFrom?: Report['policy_from'];
  suiteChanges?: Report['suite_changes'];
  /** The judge calibration the run read; its criteria are the calibrated ones unless `calibratedCriteria` says otherwise. */
  judgeCalibration?: Report['judge_calibration'];
  agentIsolation?: Report['agent_isolation'];
  baselineCache?: Report['baseline_cache'];
  /** With `models`: the budget; the spend and what was cut are counted from the episodes. */
  budget?: { run_usd?: number; episode_usd?: number };
  filter?: Report['filter'];
  checkoutWarnings?: Report['checkout_warnings'];
}

export interface SuiteInput extends ReportFacts, CaseOptions {
  /** The cases, each scenario once; any iterable, read once, in any order. */
  cases: Iterable<CaseInput>;
}

/** Assembles report.json: compares every case, counts the classes and decides the verdict and its reasons. */
export function compareSuite(input: SuiteInput): Report {
  const options: CaseOptions = {
    ks: input.ks,
    stateDiffCap: input.stateDiffCap,
    ignoreColumns: input.ignoreColumns,
    sequential: input.sequential,
    calibratedCriteria: input.calibratedCriteria ?? input.judgeCalibration?.calibrated,
  };
  const seeds = input.seeds === 'episodes' ? {} : input.seeds;
  const seen = new Set<string>();
  const cases = [];
  const spend = input.budget ? modelSpendCounter(input.budget) : undefined;
  for (const c of input.cases) {
    spend?.count(c);
    if (seen.has(c.scenario.id)) throw new Error(`compareSuite: scenario '${c.scenario.id}' is given twice`);
    seen.add(c.scenario.id);
    if (input.seeds === 'episodes') recordSeeds(seeds!, c);
    cases.push(
      compareCase(c.scenario, c.base, c.head, c.decision ? { ...options, decision: c.decision } : options),
    );
  }
  const gate = input.gate;
  const body: ReportBody = {
    version: 1,
    engine: input.engine,
    pin: input.pin,
    sides: input.sides,
    cases,
    shard: input.shard ?? null,
    interrupted: input.interrupted ?? false,
  };
  if (gate) body.gate = { block: [...gate.block], warn: [...gate.warn] };
  if (input.engineReason !== undefined) body.engine_reason = input.engineReason;
  if (input.identicalSides) body.identical_sides = true;
  if (input.repeats !== undefined) body.repeats = input.repeats;
  if (input.sequential) {
    const { min, max, alpha = LOOK_ALPHA } = input.sequential;
    body.repeats_policy = { min, max, alpha };
  }
  if (seeds !== undefined) body.seeds = seeds;
  if (input.startedAt !== undefined) body.started_at = input.startedAt;
  if (input.durationMs !== undefined) body.duration_ms = input.durationMs;
  if (input.episodesFile !== undefined) body.episodes_file = input.episodesFile;
  if (input.policyFrom) body.policy_from = input.policyFrom;
  if (input.suiteChanges) body.suite_changes = input.suiteChanges;
  if (input.judgeCalibration) body.judge_calibration = input.judgeCalibration;
  if (input.agentIsolation) body.agent_isolation = input.agentIsolation;
  if (input.baselineCache) body.baseline_cache = input.baselineCache;
  if (spend) body.model_spend = spend.total();
  if (input.filter) body.filter = input.filter;
  if (input.checkoutWarnings && input.checkoutWarnings.length > 0)
    body.checkout_warnings = input.checkoutWarnings;
  return withTotals(body);
}

/** Counts report.json `model_spend` from the recorded episodes, case by case. */
function modelSpendCounter(budget: { run_usd?: number; episode_usd?: number }) {
  const out: ModelSpend = { agent_usd: 0, episodes_cut: 0, calls_refused: 0 };
  if (budget.run_usd !== undefined) out.run_usd = budget.run_usd;
  if (budget.episode_usd !== undefined) out.episode_usd = budget.episode_usd;
  return {
    count(c: CaseInput) {
      for (const e of [...(c.base ?? []), ...(c.head ?? [])]) {
        if (e.record.infraError?.stage === 'budget') out.episodes_cut++;
        for (const call of e.record.modelCalls ?? []) {
          out.agent_usd += call.costUsd ?? 0;
          if (call.fault === 'budget_exceeded') out.calls_refused++;
        }
      }
    },
    total: (): ModelSpend => ({ ...out, agent_usd: Math.round(out.agent_usd * 1e6) / 1e6 }),
  };
}

function recordSeeds(seeds: Record<string, number[]>, c: CaseInput): void {
  for (const side of ['base', 'head'] as Side[]) {
    const episodes = c[side];
    if (episodes && episodes.length > 0)
      seeds[`${side}:${c.scenario.id}`] = episodes.map((g) => g.record.seed);
  }
}
