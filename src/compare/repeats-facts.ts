// The repeats policy a run used and how often that policy gives a wrong verdict, for report.json; and,
// for a fixed N, the warning when the flakiness the run saw makes that N block an unchanged agent
// more than 5% of the time. The rates are exact for one critical expectation failing independently
// at a fixed rate (src/stats/error-rates.ts), so they are computed from the policy here rather than
// taken from anything a report file says.
import { DEFAULT_REPEATS } from '../config/schema.js';
import type { RepeatsRates, RepeatsWarning, Report } from '../model/report.js';
import { errorRates, FALSE_BLOCK_TARGET, fixedOutcome, meetsTargets } from '../stats/error-rates.js';

/** The rates of the policy a report ran with; undefined without a base (nothing is compared). */
function repeatsRatesOf(
  report: Pick<Report, 'repeats_policy' | 'repeats' | 'sides'>,
): RepeatsRates | undefined {
  if (!report.sides.base) return undefined;
  const p = report.repeats_policy;
  const policy = p
    ? { min: p.min, max: p.max }
    : report.repeats
      ? { min: report.repeats, max: report.repeats }
      : null;
  if (!policy) return undefined;
  const adaptive = policy.min < policy.max;
  const out: RepeatsRates = {
    ...policy,
    adaptive,
    default: adaptive && policy.min === DEFAULT_REPEATS.min && policy.max === DEFAULT_REPEATS.max,
  };
  const rates = errorRates(adaptive ? policy : policy.min);
  if (rates) Object.assign(out, rates, { meets_targets: meetsTargets(rates) });
  return out;
}

/**
 * With a fixed N: the critical expectation whose observed failure rate on either side gives the
 * highest false BLOCK rate at that N, when that rate is over 5%; undefined otherwise.
 */
function repeatsWarningOf(
  report: Pick<Report, 'repeats_policy' | 'repeats' | 'sides' | 'cases'>,
): RepeatsWarning | undefined {
  const n = report.repeats;
  if (report.repeats_policy || !n || !report.sides.base) return undefined;
  let worst: RepeatsWarning | undefined;
  for (const c of report.cases) {
    for (const side of ['base', 'head'] as const) {
      const s = c[side];
      if (!s) continue;
      for (const [id, e] of Object.entries(s.expectations)) {
        const runs = e.pass + e.fail;
        // Only a side whose repeats disagree shows flakiness; a critical expectation is what blocks.
        if (!e.critical || e.fail === 0 || e.pass === 0) continue;
        const rate = e.fail / runs;
        const falseBlock = fixedOutcome(n, rate, rate).block;
        if (falseBlock > FALSE_BLOCK_TARGET && (!worst || falseBlock > worst.false_block)) {
          worst = { scenario: c.id, side, expectation: id, fails: e.fail, runs, false_block: falseBlock };
        }
      }
    }
  }
  return worst;
}

/** Both, as report.json fields (absent when they say nothing). */
export function repeatsFacts(
  report: Pick<Report, 'repeats_policy' | 'repeats' | 'sides' | 'cases'>,
): Pick<Report, 'repeats_rates' | 'repeats_warning'> {
  const rates = repeatsRatesOf(report);
  const warning = repeatsWarningOf(report);
  return { ...(rates ? { repeats_rates: rates } : {}), ...(warning ? { repeats_warning: warning } : {}) };
}
