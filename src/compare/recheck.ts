// Recomputes what a case of report.json derives from its own per-expectation counts (the class, the
// flaky flags, the changed expectations, the side statistics) with the same functions compare uses,
// and refuses a case whose stated class or counts contradict each other. What a report says about
// its own classification is never believed: a report read from a file keeps the recomputed cases,
// and its verdict, reasons and totals are computed again from them (withTotals).
import type { CaseReport, Report, SideSummary } from '../model/report.js';
import { decideCase } from '../stats/case-decision.js';
import { LOOK_ALPHA, type SequentialPolicy } from '../stats/sequential.js';
import { classifySummaries } from './classify.js';
import { sideStats } from './stats.js';
import { withoutTotals, withTotals } from './totals.js';

/** A contradiction inside a report: where (a JSON path) and what. */
export interface Contradiction {
  path: string;
  message: string;
}

export type Recheck = { ok: true; case: CaseReport } | { ok: false; problem: Contradiction };

function sideProblem(s: SideSummary, at: string): Contradiction | null {
  const infra = s.infraErrors ?? 0;
  if (s.passes > s.runs)
    return { path: `${at}.passes`, message: `${s.passes} passes out of ${s.runs} runs is impossible` };
  if (infra > s.runs) {
    return {
      path: `${at}.infraErrors`,
      message: `${infra} ungradable repeats out of ${s.runs} runs is impossible`,
    };
  }
  // A repeat that passed was graded, so passes and ungradable repeats never overlap.
  if (s.passes + infra > s.runs) {
    return {
      path: `${at}.passes`,
      message: `${s.passes} passes and ${infra} ungradable repeats are more than the side's ${s.runs} runs`,
    };
  }
  if (s.episodes && s.episodes.length > s.runs) {
    return { path: `${at}.episodes`, message: `${s.episodes.length} episode ids for ${s.runs} runs` };
  }
  for (const [id, e] of Object.entries(s.expectations)) {
    const where = `${at}.expectations[${JSON.stringify(id)}]`;
    if (e.pass + e.fail + e.error > s.runs) {
      return {
        path: where,
        message: `${e.pass} pass + ${e.fail} fail + ${e.error} error is more than the side's ${s.runs} runs`,
      };
    }
    if ((e.agentErrors ?? 0) > e.error) {
      return {
        path: where,
        message: `${e.agentErrors} errors caused by the agent out of ${e.error} errors is impossible`,
      };
    }
    // A repeat passes only when every expectation passed in it.
    if (e.pass < s.passes) {
      return {
        path: where,
        message: `passed ${e.pass} times, but the side says ${s.passes} repeats passed every expectation`,
      };
    }
  }
  return null;
}

/** The sequential policy a report's adaptive repeats ran with; null for fixed repeats. */
export function sequentialPolicyOf(report: Pick<Report, 'repeats_policy'>): SequentialPolicy | null {
  const p = report.repeats_policy;
  return p ? { min: p.min, max: p.max, alpha: p.alpha } : null;
}

/** Checks that the repeats policy is one stategate runs: the test's level is fixed, not the report's to choose. */
export function policyProblem(report: Pick<Report, 'repeats_policy'>): Contradiction | null {
  const p = report.repeats_policy;
  if (p && p.alpha !== LOOK_ALPHA) {
    return {
      path: 'repeats_policy.alpha',
      message: `expected ${LOOK_ALPHA}, the level of stategate's sequential test, got ${p.alpha}`,
    };
  }
  return null;
}

function ksOf(s: SideSummary): number[] | undefined {
  return s.stats ? Object.keys(s.stats.pass_at_k).map(Number) : undefined;
}

/** The side's statistics recomputed (with the default k when a report older than them has none). */
function restat(s: SideSummary | null): SideSummary | null {
  if (!s) return s;
  return { ...s, stats: sideStats(s, ksOf(s)) };
}

function flakyText(f: { base: boolean; head: boolean }): string {
  const sides = [f.base ? 'base' : '', f.head ? 'head' : ''].filter(Boolean);
  return sides.length > 0 ? `flaky on ${sides.join(' and ')}` : 'not flaky';
}

/**
 * Recomputes one case (at `at`, e.g. `cases[3]`) from its counts; a contradiction when its class, its
 * flaky flags or its counts do not hold together.
 */
export function recheckCase(c: CaseReport, policy: SequentialPolicy | null, at: string): Recheck {
  if (c.head === null) {
    return { ok: false, problem: { path: `${at}.head`, message: 'expected the head side, got null' } };
  }
  for (const side of ['base', 'head'] as const) {
    const s = c[side];
    const problem = s ? sideProblem(s, `${at}.${side}`) : null;
    if (problem) return { ok: false, problem };
  }
  let decision: ReturnType<typeof decideCase> | undefined;
  let classification: ReturnType<typeof classifySummaries>;
  try {
    decision = policy ? decideCase(c.base, c.head, policy) : undefined;
    classification = classifySummaries(c.base, c.head, {}, decision);
  } catch (err) {
    return {
      ok: false,
      problem: { path: at, message: `its counts cannot be classified: ${(err as Error).message}` },
    };
  }
  if (classification.class !== c.class) {
    return {
      ok: false,
      problem: {
        path: `${at}.class`,
        message: `says '${c.class}', but its own counts make it '${classification.class}' (${classification.reason})`,
      },
    };
  }
  const { flaky } = classification;
  if (flaky.base !== c.flaky.base || flaky.head !== c.flaky.head) {
    return {
      ok: false,
      problem: {
        path: `${at}.flaky`,
        message: `says ${flakyText(c.flaky)}, but its own counts make it ${flakyText(flaky)}`,
      },
    };
  }
  let out: CaseReport;
  try {
    out = { ...c, base: restat(c.base), head: restat(c.head) };
  } catch (err) {
    return {
      ok: false,
      problem: { path: at, message: `its statistics cannot be recomputed: ${(err as Error).message}` },
    };
  }
  out.expectations_changed = classification.expectations_changed;
  // The incomplete sentence names why repeats failed to grade, which the counts do not carry.
  if (c.class !== 'incomplete' || c.reason === undefined) out.reason = classification.reason;
  if (decision)
    out.repeats_decision = { base: c.base?.runs ?? 0, head: c.head.runs, reason: decision.reason };
  return { ok: true, case: out };
}

export type ReportRecheck = { ok: true; report: Report } | { ok: false; problem: Contradiction };

/**
 * A report as read from a file, believed only where it can be checked: its policy and every case
 * rechecked (a contradiction refused, a case id given twice too), and its verdict, reasons and
 * totals computed again from the rechecked cases with its own gate.
 */
export function recheckReport(report: Report): ReportRecheck {
  const policy = policyProblem(report);
  if (policy) return { ok: false, problem: policy };
  const seen = new Set<string>();
  const cases: CaseReport[] = [];
  for (const [i, c] of report.cases.entries()) {
    if (seen.has(c.id))
      return { ok: false, problem: { path: `cases[${i}].id`, message: `case '${c.id}' appears twice` } };
    seen.add(c.id);
    const checked = recheckCase(c, sequentialPolicyOf(report), `cases[${i}]`);
    if (!checked.ok) return checked;
    cases.push(checked.case);
  }
  return { ok: true, report: withTotals({ ...withoutTotals(report), cases }) };
}
