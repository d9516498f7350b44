// What a report derives from its cases: the class counts, the suite-level statistics, signatures and
// cost, the repeats policy's error rates, and the verdict with every reason for it. One function
// (withTotals) fills them all, for a run's report and a merged one alike, so what report.json says
// about its cases always follows from the cases it holds.

import { CaseClassName } from '../config/schema.js';
import { DEFAULT_GATE, gateDecision, type RunFacts } from '../gate/verdict.js';
import type { CaseClass } from '../model/classes.js';
import type { Side } from '../model/episode.js';
import type { CaseReport, Report, SideStats, SuiteCost } from '../model/report.js';
import { filterWords } from '../plan/scenario-filter.js';
import { repeatsFacts } from './repeats-facts.js';
import { sideStats, suiteStats } from './stats.js';
import { weakenings } from './suite-changes.js';

/** The fields withTotals computes; a report body is everything else. */
export type Totals =
  | 'verdict'
  | 'gate_reasons'
  | 'counts'
  | 'stats'
  | 'signatures'
  | 'cost'
  | 'repeats_rates'
  | 'repeats_warning';

export type ReportBody = Omit<Report, Totals>;

/** The number of cases in each class, every class present. */
function countClasses(cases: readonly Pick<CaseReport, 'class'>[]): Record<CaseClass, number> {
  const counts = Object.fromEntries(CaseClassName.options.map((c) => [c, 0])) as Record<CaseClass, number>;
  for (const c of cases) counts[c.class] += 1;
  return counts;
}

/** Suite-level averages per side, over the cases that have that side. */
function suiteStatsOf(cases: readonly CaseReport[]): Report['stats'] {
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
function suiteSignaturesOf(cases: readonly CaseReport[]): NonNullable<Report['signatures']> {
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
function suiteCostOf(cases: readonly CaseReport[]): NonNullable<Report['cost']> {
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

/**
 * Why a report's cases are not the whole pinned suite, or undefined: its filter, or else (whatever a
 * report says of itself) scenarios of its pin with no case. A shard's report, a merge missing
 * shards and an interrupted run are partial for reasons said elsewhere.
 */
export function notWholeSuite(
  report: Pick<Report, 'filter' | 'pin' | 'cases' | 'shard' | 'missing_shards' | 'interrupted'>,
): string | undefined {
  const f = report.filter;
  if (f) {
    return `a filtered run (${filterWords(f) || 'a filter'}): ${f.selected} of the suite's ${f.total} scenarios, not the whole suite`;
  }
  if (report.shard || (report.missing_shards?.length ?? 0) > 0 || report.interrupted) return undefined;
  const graded = new Set(report.cases.map((c) => c.id));
  const missing = Object.keys(report.pin.scenarios ?? {}).filter((id) => !graded.has(id));
  if (missing.length === 0) return undefined;
  const shown =
    missing.slice(0, 3).join(', ') + (missing.length > 3 ? ` and ${missing.length - 3} more` : '');
  return `not the whole suite: ${missing.length} scenario${missing.length === 1 ? ' of the pinned suite has' : 's of the pinned suite have'} no case (${shown})`;
}

/** What the verdict reads from a report beside its cases: interruption, missing shards, a weakened suite, the policy's source, a partial suite. */
function runFactsOf(
  report: Pick<
    Report,
    'interrupted' | 'missing_shards' | 'suite_changes' | 'policy_from' | 'filter' | 'pin' | 'cases' | 'shard'
  >,
): RunFacts {
  const from = report.policy_from;
  return {
    interrupted: report.interrupted,
    missingShards: report.missing_shards,
    notWholeSuite: notWholeSuite(report),
    suiteWeakened: weakenings(report.suite_changes).map((c) => c.text),
    policyProblem:
      from?.side === 'default' ? `the built-in default policy gated this run: ${from.reason}` : undefined,
  };
}

export interface TotalsOptions {
  /**
   * Whether the repeats policy's error rates and fixed-N warning are stated (default true). A merge
   * of shards that ran under different repeats policies has no one policy to state them for.
   */
  repeatsRates?: boolean;
}

/**
 * The whole report: the body with the cases sorted by id, and every total computed from them,
 * the verdict and its reasons decided by the gate (the built-in one when the body has none).
 */
export function withTotals(body: ReportBody, options: TotalsOptions = {}): Report {
  const cases = [...body.cases].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const gate = body.gate ?? { block: [...DEFAULT_GATE.block], warn: [...DEFAULT_GATE.warn] };
  const decision = gateDecision(cases, gate, runFactsOf(body));
  const rates = options.repeatsRates === false ? {} : repeatsFacts({ ...body, cases });
  // Totals a body carries anyway (a report read back, spread) are stale: each is computed here.
  const { version, engine, pin, sides, cases: _unsorted, gate: _gate, ...rest } = withoutTotals(body);
  // Key order is the reading order of report.json: the verdict and its reasons first, the cases last.
  return {
    version,
    verdict: decision.verdict,
    gate_reasons: decision.reasons,
    engine,
    pin,
    sides,
    counts: countClasses(cases),
    ...rest,
    gate,
    ...rates,
    stats: suiteStatsOf(cases),
    signatures: suiteSignaturesOf(cases),
    cost: suiteCostOf(cases),
    cases,
  };
}

/** The body of a report: everything but what withTotals computes. */
export function withoutTotals(report: Report | ReportBody): ReportBody {
  const {
    verdict: _verdict,
    gate_reasons: _reasons,
    counts: _counts,
    stats: _stats,
    signatures: _signatures,
    cost: _cost,
    repeats_rates: _rates,
    repeats_warning: _warning,
    ...body
  } = report as Report;
  return body;
}
