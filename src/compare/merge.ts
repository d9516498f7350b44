// Joins the reports of shards of one run into the report of the whole (`stategate merge`). It
// refuses reports of different pinned suites, templates or commits, and overlapping slices. It
// believes nothing a report says about itself: each case's class is recomputed from its counts
// (a contradiction is refused) and the verdict and its reasons are decided by the merging checkout's
// gate, with the totals every report is assembled with (totals.ts).
import { DEFAULT_GATE, type GatePolicy } from '../gate/verdict.js';
import { sha256 } from '../model/content-hash.js';
import type { Side } from '../model/episode.js';
import type { BaselineCacheFacts, CaseReport, Report } from '../model/report.js';
import { policyProblem, recheckCase, sequentialPolicyOf } from './recheck.js';
import { type ReportBody, withTotals } from './totals.js';

export interface MergeOptions {
  /** The gate to decide with (the merging checkout's); default the built-in policy, never a report's. */
  gate?: GatePolicy;
  /** Marks the merged report unverified with this reason (reports from a run the base does not control). */
  unverified?: string;
}

export type MergeResult = { ok: true; report: Report } | { ok: false; error: string };

/** A merge the reports do not allow; the message says which reports and why. */
export class MergeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MergeError';
  }
}

function describe(r: Report, i: number): string {
  return r.shard ? `report ${i + 1} (shard ${r.shard.index}/${r.shard.total})` : `report ${i + 1}`;
}

function short(hash: string): string {
  return hash.slice(0, 12);
}

function sideText(s: Report['sides'][Side]): string {
  return s ? `${s.ref}${s.sha ? ` @ ${s.sha.slice(0, 12)}` : ''}` : 'none';
}

function check(reports: readonly Report[]): string | null {
  if (reports.length === 0) return 'no reports to merge';
  for (const [i, r] of reports.entries()) {
    if (!r || typeof r !== 'object' || r.version !== 1 || !Array.isArray(r.cases) || !r.pin) {
      return `report ${i + 1} is not a version 1 report.json (version ${JSON.stringify(r?.version)})`;
    }
  }
  const first = reports[0];
  for (const [i, r] of reports.entries()) {
    if (i === 0) continue;
    for (const field of ['suite_hash', 'template_hash'] as const) {
      if (r.pin[field] !== first.pin[field]) {
        return `${describe(r, i)} has pin.${field} ${short(r.pin[field])} but ${describe(first, 0)} has ${short(first.pin[field])}: merge only shards of one run on one pinned suite`;
      }
    }
    // Shards judged against different calibrations would block on different rules.
    const calibration = (x: Report) =>
      `${x.judge_calibration?.model ?? ''}\0${x.judge_calibration?.sha256 ?? ''}`;
    if (calibration(r) !== calibration(first)) {
      return `${describe(r, i)} used another judge calibration (${r.judge_calibration?.file ?? 'none'}) than ${describe(first, 0)} (${first.judge_calibration?.file ?? 'none'})`;
    }
    // Shards of one run measured one suite against one base under one policy.
    const trust = (x: Report) => JSON.stringify([x.policy_from ?? null, x.suite_changes ?? null]);
    if (trust(r) !== trust(first)) {
      return `${describe(r, i)} reports other suite changes or another policy source than ${describe(first, 0)}`;
    }
    for (const side of ['base', 'head'] as Side[]) {
      const a = first.sides[side];
      const b = r.sides[side];
      if ((a?.sha ?? null) !== (b?.sha ?? null) || (a === null) !== (b === null)) {
        return `${describe(r, i)} ran ${side} ${sideText(b)} but ${describe(first, 0)} ran ${side} ${sideText(a)}`;
      }
    }
  }
  const shardOwner = new Map<number, number>();
  for (const [i, r] of reports.entries()) {
    if (!r.shard) continue;
    if (first.shard && r.shard.total !== first.shard.total) {
      return `${describe(r, i)} splits the run into ${r.shard.total} shards but ${describe(first, 0)} into ${first.shard.total}`;
    }
    const owner = shardOwner.get(r.shard.index);
    if (owner !== undefined)
      return `shard ${r.shard.index}/${r.shard.total} appears twice: reports ${owner + 1} and ${i + 1}`;
    shardOwner.set(r.shard.index, i);
  }
  const caseOwner = new Map<string, number>();
  for (const [i, r] of reports.entries()) {
    for (const c of r.cases) {
      const owner = caseOwner.get(c.id);
      if (owner !== undefined) {
        return `case '${c.id}' is in ${describe(reports[owner], owner)} and ${describe(r, i)}: the slices overlap`;
      }
      caseOwner.set(c.id, i);
    }
  }
  return null;
}

function missingShards(reports: readonly Report[]): number[] {
  const total = reports.find((r) => r.shard)?.shard?.total;
  if (!total || reports.some((r) => !r.shard)) return [];
  const present = new Set(reports.map((r) => r.shard!.index));
  return Array.from({ length: total }, (_, i) => i + 1).filter((i) => !present.has(i));
}

/** Every case recomputed from its counts, or the first contradiction, naming the report. */
function recheckAll(reports: readonly Report[]): { cases: CaseReport[] } | { error: string } {
  const cases: CaseReport[] = [];
  for (const [i, r] of reports.entries()) {
    const policy = policyProblem(r);
    if (policy) return { error: `${describe(r, i)}: ${policy.path}: ${policy.message}` };
    for (const [j, c] of r.cases.entries()) {
      const checked = recheckCase(c, sequentialPolicyOf(r), `cases[${j}]`);
      if (!checked.ok)
        return { error: `${describe(r, i)}: ${checked.problem.path}: ${checked.problem.message}` };
      cases.push(checked.case);
    }
  }
  return { cases };
}

/** The filters of the reports joined, or null when none was filtered. */
function mergedFilter(reports: readonly Report[], selected: number, total: number): Report['filter'] | null {
  const filters = reports.flatMap((r) => (r.filter ? [r.filter] : []));
  if (filters.length === 0) return null;
  const union = (pick: (f: NonNullable<Report['filter']>) => string[]) => [...new Set(filters.flatMap(pick))];
  return {
    scenarios: union((f) => f.scenarios),
    tags: union((f) => f.tags),
    selected: Math.min(selected, total),
    total,
  };
}

/** Joins shard reports, or says why they cannot be joined. */
export function tryMergeReports(reports: readonly Report[], options: MergeOptions = {}): MergeResult {
  const error = check(reports);
  if (error) return { ok: false, error };
  const rechecked = recheckAll(reports);
  if ('error' in rechecked) return { ok: false, error: rechecked.error };
  const first = reports[0];
  const { cases } = rechecked;
  const engines = [...new Set(reports.map((r) => r.engine))];
  const repeats = [...new Set(reports.map((r) => r.repeats).filter((n) => n !== undefined))];
  const starts = reports.map((r) => r.started_at).filter((t): t is string => typeof t === 'string');
  const durations = reports.map((r) => r.duration_ms).filter((d): d is number => typeof d === 'number');
  const missing = missingShards(reports);

  const merged: ReportBody = {
    version: 1,
    engine: first.engine,
    pin: {
      suite_hash: first.pin.suite_hash,
      template_hash: first.pin.template_hash,
      scenarios: Object.assign({}, ...reports.map((r) => r.pin.scenarios ?? {})),
    },
    sides: first.sides,
    cases,
    shard: null,
    interrupted: reports.some((r) => r.interrupted === true),
  };
  const reason = engines.length > 1 ? `the shards ran on ${engines.join(', ')}` : first.engine_reason;
  if (reason !== undefined) merged.engine_reason = reason;
  const gate = options.gate ?? DEFAULT_GATE;
  merged.gate = { block: [...gate.block], warn: [...gate.warn] };
  // Distrust is kept: a report already unverified makes the merge unverified too.
  const unverified = options.unverified ?? reports.find((r) => r.unverified)?.unverified?.reason;
  if (unverified !== undefined) merged.unverified = { reason: unverified };
  if (first.judge_calibration) merged.judge_calibration = first.judge_calibration;
  // Where the shards' policy came from is the shards' word: shown only when the run is trusted.
  if (first.policy_from && unverified === undefined) merged.policy_from = first.policy_from;
  if (first.suite_changes) merged.suite_changes = first.suite_changes;
  // A filtered report keeps the merge filtered: it is not a whole-suite run, whatever else joins it.
  const filtered = mergedFilter(reports, cases.length, Object.keys(merged.pin.scenarios).length);
  if (filtered) merged.filter = filtered;
  const warnings = reports.flatMap((r) => r.checkout_warnings ?? []);
  const distinct = [...new Map(warnings.map((w) => [`${w.side}\0${w.text}`, w])).values()].slice(0, 8);
  if (distinct.length > 0) merged.checkout_warnings = distinct;
  if (repeats.length === 1) merged.repeats = repeats[0];
  // Shards of one run share their adaptive policy; its error rates and any fixed-N warning are
  // recomputed from the merged cases (withTotals), not taken from the shards' word.
  const policies = new Set(reports.map((r) => JSON.stringify(r.repeats_policy ?? null)));
  if (policies.size === 1 && first.repeats_policy) merged.repeats_policy = { ...first.repeats_policy };
  if (reports.some((r) => r.seeds)) merged.seeds = Object.assign({}, ...reports.map((r) => r.seeds ?? {}));
  if (starts.length > 0) merged.started_at = [...starts].sort()[0];
  // Shards run side by side, so the whole took as long as the slowest.
  if (durations.length > 0) merged.duration_ms = Math.max(...durations);
  if (missing.length > 0) merged.missing_shards = missing;
  const cache = mergedBaselineCache(reports);
  if (cache) merged.baseline_cache = cache;
  return { ok: true, report: withTotals(merged, { repeatsRates: policies.size === 1 }) };
}

/**
 * What the shards took from the baseline cache, summed: each shard has an entry of its own (the
 * shard is part of the key), so the merged report names one key only when they share it, else a
 * digest of theirs; reused from the earliest run any shard reused. Informational: no verdict reads it.
 */
function mergedBaselineCache(reports: readonly Report[]): BaselineCacheFacts | undefined {
  const facts = reports.map((r) => r.baseline_cache).filter((c): c is BaselineCacheFacts => c !== undefined);
  if (facts.length === 0) return undefined;
  const keys = [...new Set(facts.map((c) => c.key))].sort();
  const reused = facts.reduce((n, c) => n + c.reused_episodes, 0);
  const stored = facts
    .filter((c) => c.hit && c.stored_at !== null)
    .map((c) => c.stored_at as string)
    .sort();
  const merged: BaselineCacheFacts = {
    key: keys.length === 1 ? keys[0] : sha256(keys.join('\n')),
    hit: reused > 0,
    reused_episodes: reused,
    stored_at: stored[0] ?? null,
    saved: facts.some((c) => c.saved),
  };
  const hits = facts.filter((c) => c.hit).length;
  if (facts.length > 1)
    merged.note = `${hits} of ${facts.length} shards reused base episodes, each under its own key`;
  else if (facts[0].note !== undefined) merged.note = facts[0].note;
  return merged;
}

/**
 * Joins shard reports into one, recomputing each case's class and the verdict (with `options.gate`);
 * throws a MergeError when they do not fit together or contradict themselves.
 */
export function mergeReports(reports: readonly Report[], options: MergeOptions = {}): Report {
  const result = tryMergeReports(reports, options);
  if (!result.ok) throw new MergeError(result.error);
  return result.report;
}
