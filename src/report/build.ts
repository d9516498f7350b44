// report.json (docs/architecture.md) from the compared cases and the facts of the run.

import { type CaseInput, type CaseOptions, compareCase } from '../compare/case.js';
import { sideStats, suiteStats } from '../compare/stats.js';
import { weakenings } from '../compare/suite-changes.js';
import { type CaseClass, CaseClassName } from '../config/schema.js';
import {
  DEFAULT_GATE,
  type GateDecision,
  type GatePolicy,
  gateDecision,
  gateVerdict,
  type RunFacts,
} from '../gate/verdict.js';
import type { Side } from '../model/episode.js';
import type { CaseReport, Report, SideStats, SuiteCost } from '../model/report.js';
import type { EngineName } from '../sandbox/types.js';
import { LOOK_ALPHA } from '../stats/sequential.js';

/** Everything a report is made of besides the cases. */
export interface ReportFacts {
  pin: Report['pin'];
  sides: Report['sides'];
  engine: EngineName;
  engineReason?: string;
  gate?: GatePolicy;
  repeats?: number;
  seeds?: Record<string, number[]>;
  shard?: { index: number; total: number } | null;
  interrupted?: boolean;
  /** ISO time the run started (passed in: building a report reads no clock). */
  startedAt?: string;
  durationMs?: number;
  episodesFile?: string;
}

export interface ReportInput extends ReportFacts, CaseOptions {
  cases: readonly CaseInput[];
}

/** The number of cases in each class, every class present. */
export function countClasses(cases: readonly Pick<CaseReport, 'class'>[]): Record<CaseClass, number> {
  const counts = Object.fromEntries(CaseClassName.options.map((c) => [c, 0])) as Record<CaseClass, number>;
  for (const c of cases) counts[c.class] += 1;
  return counts;
}

/** Suite-level averages per side, over the cases that have that side. */
export function suiteStatsOf(cases: readonly CaseReport[]): Report['stats'] {
  const out: NonNullable<Report['stats']> = {};
  for (const side of ['base', 'head'] as Side[]) {
    const per: SideStats[] = [];
    for (const c of cases) {
      const s = c[side];
      if (s) per.push(s.stats ?? sideStats(s));
    }
    if (per.length > 0) out[side] = suiteStats(per);
  }
  return out;
}

/** Failed repeats by failure signature per side, summed over the cases. */
export function suiteSignaturesOf(cases: readonly CaseReport[]): NonNullable<Report['signatures']> {
  const out: NonNullable<Report['signatures']> = {};
  for (const side of ['base', 'head'] as Side[]) {
    for (const c of cases) {
      const s = c[side];
      if (!s?.signatures) continue;
      out[side] ??= {};
      const sums = out[side];
      for (const [name, n] of Object.entries(s.signatures) as [keyof typeof sums, number][]) {
        sums[name] = (sums[name] ?? 0) + n;
      }
    }
  }
  return out;
}

/** Cost per successful episode and per dependable case per side, over the cases that reported a cost. */
export function suiteCostOf(cases: readonly CaseReport[]): NonNullable<Report['cost']> {
  const out: NonNullable<Report['cost']> = {};
  for (const side of ['base', 'head'] as Side[]) {
    const costs = cases.flatMap((c) => (c[side]?.cost ? [c[side].cost] : []));
    if (costs.length === 0) continue;
    const total = Math.round(costs.reduce((a, c) => a + c.total_usd, 0) * 1e6) / 1e6;
    const successes = costs.reduce((a, c) => a + c.successful_episodes, 0);
    const dependable = costs.filter((c) => c.per_dependable_case !== null).length;
    const per = (n: number) => (n === 0 ? null : Math.round((total / n) * 1e6) / 1e6);
    const cost: SuiteCost = {
      cases: costs.length,
      total_usd: total,
      successful_episodes: successes,
      dependable_cases: dependable,
      per_successful_episode: per(successes),
      per_dependable_case: per(dependable),
    };
    out[side] = cost;
  }
  return out;
}

/** What the verdict reads from a report beside its cases: interruption, missing shards, a weakened suite, the policy's source. */
export function runFactsOf(
  report: Pick<Report, 'interrupted' | 'missing_shards' | 'suite_changes' | 'policy_from'>,
): RunFacts {
  const from = report.policy_from;
  return {
    interrupted: report.interrupted,
    missingShards: report.missing_shards,
    suiteWeakened: weakenings(report.suite_changes).map((c) => c.text),
    policyProblem:
      from?.side === 'default' ? `the built-in default policy gated this run: ${from.reason}` : undefined,
  };
}

/** The verdict of a report and every reason for it, as the renderings show them. */
export function reportDecision(report: Report): GateDecision {
  return gateDecision(report.cases, report.gate ?? DEFAULT_GATE, runFactsOf(report));
}

/** Fills in what follows from the cases (counts, suite statistics, verdict), cases sorted by id. */
export function withTotals(
  report: Omit<Report, 'counts' | 'verdict' | 'stats' | 'signatures' | 'cost'>,
): Report {
  const cases = [...report.cases].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const gate = report.gate ?? { block: [...DEFAULT_GATE.block], warn: [...DEFAULT_GATE.warn] };
  const verdict = gateVerdict(cases, gate, runFactsOf(report));
  const { version, engine, pin, sides, cases: _unsorted, gate: _gate, ...rest } = report;
  // Key order is the reading order of report.json: the verdict first, the cases last.
  return {
    version,
    verdict,
    engine,
    pin,
    sides,
    counts: countClasses(cases),
    ...rest,
    gate,
    stats: suiteStatsOf(cases),
    signatures: suiteSignaturesOf(cases),
    cost: suiteCostOf(cases),
    cases,
  };
}

/** Assembles report.json: compares every case, counts the classes and decides the verdict. */
export function buildReport(input: ReportInput): Report {
  const seen = new Set<string>();
  for (const c of input.cases) {
    if (seen.has(c.scenario.id)) throw new Error(`buildReport: scenario '${c.scenario.id}' is given twice`);
    seen.add(c.scenario.id);
  }
  const cases = input.cases.map((c) => compareCase(c.scenario, c.base, c.head, input));
  const report: Omit<Report, 'counts' | 'verdict' | 'stats' | 'signatures' | 'cost'> = {
    version: 1,
    engine: input.engine,
    pin: input.pin,
    sides: input.sides,
    cases,
    gate: { block: [...(input.gate ?? DEFAULT_GATE).block], warn: [...(input.gate ?? DEFAULT_GATE).warn] },
    shard: input.shard ?? null,
    interrupted: input.interrupted ?? false,
  };
  if (input.engineReason !== undefined) report.engine_reason = input.engineReason;
  if (input.repeats !== undefined) report.repeats = input.repeats;
  if (input.sequential) {
    const { min, max, alpha = LOOK_ALPHA } = input.sequential;
    report.repeats_policy = { min, max, alpha };
  }
  if (input.seeds !== undefined) report.seeds = input.seeds;
  if (input.startedAt !== undefined) report.started_at = input.startedAt;
  if (input.durationMs !== undefined) report.duration_ms = input.durationMs;
  if (input.episodesFile !== undefined) report.episodes_file = input.episodesFile;
  return withTotals(report);
}
