// report.json (DESIGN.md section 8) from the compared cases and the facts of the run.

import { type CaseInput, type CaseOptions, compareCase } from '../compare/case.js';
import { sideStats, suiteStats } from '../compare/stats.js';
import { type CaseClass, CaseClassName } from '../config/schema.js';
import { DEFAULT_GATE, type GatePolicy, gateVerdict } from '../gate/verdict.js';
import type { Side } from '../record.js';
import type { EngineName } from '../sandbox/types.js';
import type { CaseReport, Report, SideStats } from './types.js';

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

/** Fills in what follows from the cases (counts, suite statistics, verdict), cases sorted by id. */
export function withTotals(report: Omit<Report, 'counts' | 'verdict' | 'stats'>): Report {
  const cases = [...report.cases].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const gate = report.gate ?? { block: [...DEFAULT_GATE.block], warn: [...DEFAULT_GATE.warn] };
  const verdict = gateVerdict(cases, gate, {
    interrupted: report.interrupted,
    missingShards: report.missing_shards,
  });
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
  const report: Omit<Report, 'counts' | 'verdict' | 'stats'> = {
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
  if (input.seeds !== undefined) report.seeds = input.seeds;
  if (input.startedAt !== undefined) report.started_at = input.startedAt;
  if (input.durationMs !== undefined) report.duration_ms = input.durationMs;
  if (input.episodesFile !== undefined) report.episodes_file = input.episodesFile;
  return withTotals(report);
}
