// One line of the report on the repeats policy in force and its error rates (report.json's
// `repeats_rates`, computed by compare/repeats-facts.ts), and the sentence of its fixed-N warning.
import { DEFAULT_REPEATS } from '../config/schema.js';
import type { RepeatsRates, RepeatsWarning } from '../model/report.js';
import { DETECTION_TARGET, FALSE_BLOCK_TARGET } from '../stats/error-rates.js';

function pct(rate: number): string {
  if (rate === 0) return '0%';
  if (rate < 0.001) return '<0.1%';
  return `${(rate * 100).toFixed(1)}%`;
}

/** An agent's failure rate: whole percents (0%, 5%, 20%). */
function agentPct(rate: number): string {
  return `${Math.round(rate * 100)}%`;
}

function defaultWords(): string {
  return `{min: ${DEFAULT_REPEATS.min}, max: ${DEFAULT_REPEATS.max}}`;
}

/**
 * The policy in force and its error rates in one line, e.g. `Repeats: adaptive, 7 to 32 per side (the
 * default). False BLOCK of an unchanged agent failing 0% / 5% / 20% of runs: 0% / 1.0% / 4.3%; ...`.
 */
export function repeatsLine(r: RepeatsRates): string {
  const policy = r.adaptive
    ? `adaptive, ${r.min} to ${r.max} per side${r.default ? ' (the default)' : ''}`
    : `fixed, ${r.min} per side`;
  if (!r.false_block || !r.detection)
    return `Repeats: ${policy}; error rates not computed for a max over 60.`;
  const fb = r.false_block;
  const det = r.detection.map((d) => `${agentPct(d.base)} → ${agentPct(d.head)} ${pct(d.rate)}`).join(', ');
  const targets = r.meets_targets
    ? `meets the targets (false BLOCK ≤ ${agentPct(FALSE_BLOCK_TARGET)}, detection ≥ ${agentPct(DETECTION_TARGET)})`
    : `misses the targets (false BLOCK ≤ ${agentPct(FALSE_BLOCK_TARGET)}, detection ≥ ${agentPct(DETECTION_TARGET)}) the default ${defaultWords()} meets`;
  return `Repeats: ${policy}. False BLOCK of an unchanged agent failing ${fb.map((f) => agentPct(f.fails)).join(' / ')} of runs: ${fb.map((f) => pct(f.rate)).join(' / ')}; detection of ${det}; ${targets}.`;
}

/** The warning in a sentence: `the base failed refunded_once in 1 of 5 repeats of refund: at N=5 ...`. */
export function repeatsWarningLine(w: RepeatsWarning, n: number): string {
  return `Warning: the ${w.side} failed ${w.expectation} in ${w.fails} of ${w.runs} repeats of ${w.scenario}: at N=${n} an unchanged agent this flaky is blocked ${Math.round(w.false_block * 100)}% of the time; use repeats: ${defaultWords()}.`;
}
