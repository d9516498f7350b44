// Agreement between the judge and human labels on one criterion: raw agreement, Cohen's kappa, and
// the rule that says when the judge's verdicts on a criterion may block a merge.
import type { AgreementTable } from '../config/schema.js';

export type { AgreementTable } from '../config/schema.js';

/** A criterion needs at least this many labels the judge gave a verdict on. */
export const MIN_CALIBRATION_LABELS = 20;
/** ...the judge must agree with the human on at least this share of them... */
export const MIN_AGREEMENT = 0.8;
/** ...and Cohen's kappa must be at least this (agreement beyond what chance explains). */
export const MIN_KAPPA = 0.6;

/** An empty table. */
export function emptyTable(): AgreementTable {
  return { both_pass: 0, judge_pass_human_fail: 0, judge_fail_human_pass: 0, both_fail: 0 };
}

/** Adds one verdict pair to a table (in place). */
export function tally(table: AgreementTable, judgePass: boolean, humanPass: boolean): void {
  if (judgePass && humanPass) table.both_pass++;
  else if (judgePass) table.judge_pass_human_fail++;
  else if (humanPass) table.judge_fail_human_pass++;
  else table.both_fail++;
}

/** The number of labelled items in a table. */
export function tableSize(t: AgreementTable): number {
  return t.both_pass + t.judge_pass_human_fail + t.judge_fail_human_pass + t.both_fail;
}

/**
 * Observed agreement and the agreement expected by chance, as integers over n²:
 * po·n² = n·(a+d), pe·n² = (a+b)(a+c) + (c+d)(b+d) (rows: the judge; columns: the human).
 */
function scaled(t: AgreementTable): { n: number; observed: number; chance: number } {
  const a = t.both_pass;
  const b = t.judge_pass_human_fail;
  const c = t.judge_fail_human_pass;
  const d = t.both_fail;
  const n = a + b + c + d;
  return { n, observed: n * (a + d), chance: (a + b) * (a + c) + (c + d) * (b + d) };
}

/** The share of items where the judge and the human agree; null with no items. */
export function agreement(t: AgreementTable): number | null {
  const n = tableSize(t);
  return n === 0 ? null : (t.both_pass + t.both_fail) / n;
}

/**
 * Cohen's kappa, (po − pe) / (1 − pe); null when it is undefined: no items, or chance agreement of
 * 1 (both raters gave one and the same label to every item, so nothing tells skill from chance).
 */
export function cohensKappa(t: AgreementTable): number | null {
  const { n, observed, chance } = scaled(t);
  const square = n * n;
  if (n === 0 || chance === square) return null;
  return (observed - chance) / (square - chance);
}

export interface CalibrationVerdict {
  /** Items with a judge verdict (judge errors are not in the table). */
  n: number;
  agreement: number | null;
  kappa: number | null;
  calibrated: boolean;
  /** Each rule the table misses, in words; empty when calibrated. */
  whyNot: string[];
}

function fixed(x: number): string {
  return x.toFixed(3);
}

/**
 * Applies the calibration rule (n, agreement and kappa at or above their minimums) to a table.
 * Agreement and kappa are each one division of exact integers, so a table exactly at a minimum
 * (16 of 20) rounds to the same double as the constant and passes.
 */
export function calibrationOf(t: AgreementTable): CalibrationVerdict {
  const n = tableSize(t);
  const po = agreement(t);
  const kappa = cohensKappa(t);
  const whyNot: string[] = [];
  if (n < MIN_CALIBRATION_LABELS) {
    whyNot.push(`${n} labels with a judge verdict, fewer than ${MIN_CALIBRATION_LABELS}`);
  }
  if (po === null || po < MIN_AGREEMENT) {
    whyNot.push(`agreement ${po === null ? '—' : fixed(po)} below ${MIN_AGREEMENT}`);
  }
  if (kappa === null) {
    whyNot.push(
      n === 0
        ? 'kappa undefined: no labels'
        : 'kappa undefined: the judge and the human each gave every item the same label',
    );
  } else if (kappa < MIN_KAPPA) {
    whyNot.push(`kappa ${fixed(kappa)} below ${MIN_KAPPA}`);
  }
  return { n, agreement: po, kappa, calibrated: whyNot.length === 0, whyNot };
}
