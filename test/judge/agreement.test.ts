// Agreement, Cohen's kappa and the calibration rule on tables computed by hand.
// Notation: a = both pass, b = judge pass / human fail, c = judge fail / human pass, d = both fail,
// n = a+b+c+d, po = (a+d)/n, pe = ((a+b)(a+c) + (c+d)(b+d)) / n², kappa = (po − pe) / (1 − pe).
import { describe, expect, it } from 'vitest';
import {
  type AgreementTable,
  agreement,
  calibrationOf,
  cohensKappa,
  emptyTable,
  MIN_AGREEMENT,
  MIN_CALIBRATION_LABELS,
  MIN_KAPPA,
  tally,
} from '../../src/judge/agreement.js';

const table = (a: number, b: number, c: number, d: number): AgreementTable => ({
  both_pass: a,
  judge_pass_human_fail: b,
  judge_fail_human_pass: c,
  both_fail: d,
});

describe("Cohen's kappa on known tables", () => {
  it('the textbook table: 50 items, a=20 b=5 c=10 d=15 gives kappa 0.4', () => {
    // po = 35/50 = 0.7; judge pass 25, human pass 30;
    // pe = (25·30 + 25·20) / 2500 = (750 + 500) / 2500 = 0.5; kappa = (0.7 − 0.5) / 0.5 = 0.4.
    const t = table(20, 5, 10, 15);
    expect(agreement(t)).toBeCloseTo(0.7, 12);
    expect(cohensKappa(t)).toBeCloseTo(0.4, 12);
    expect(calibrationOf(t)).toMatchObject({
      n: 50,
      calibrated: false,
      whyNot: ['agreement 0.700 below 0.8', 'kappa 0.400 below 0.6'],
    });
  });

  it('exactly at every minimum is calibrated: 20 items, a=8 b=2 c=2 d=8', () => {
    // po = 16/20 = 0.8; judge pass 10, human pass 10; pe = (10·10 + 10·10) / 400 = 0.5;
    // kappa = (0.8 − 0.5) / (1 − 0.5) = 0.6.
    const t = table(8, 2, 2, 8);
    expect(agreement(t)).toBe(0.8);
    expect(cohensKappa(t)).toBe(0.6);
    expect(calibrationOf(t)).toEqual({ n: 20, agreement: 0.8, kappa: 0.6, calibrated: true, whyNot: [] });
    expect([MIN_CALIBRATION_LABELS, MIN_AGREEMENT, MIN_KAPPA]).toEqual([20, 0.8, 0.6]);
  });

  it('one label short fails on n alone: 19 items, a=9 b=1 c=1 d=8', () => {
    // po = 17/19 = 0.8947; judge pass 10, human pass 10; pe = (10·10 + 9·9) / 361 = 181/361;
    // kappa = (17·19 − 181) / (361 − 181) = (323 − 181) / 180 = 142/180 = 0.7889.
    const t = table(9, 1, 1, 8);
    expect(cohensKappa(t)).toBeCloseTo(142 / 180, 12);
    expect(calibrationOf(t)).toMatchObject({
      n: 19,
      calibrated: false,
      whyNot: ['19 labels with a judge verdict, fewer than 20'],
    });
  });

  it('a judge that passes everything agrees 75% but has kappa 0: a=15 b=5 c=0 d=0', () => {
    // po = 15/20 = 0.75; judge pass 20, human pass 15; pe = (20·15 + 0·5) / 400 = 0.75;
    // kappa = (0.75 − 0.75) / 0.25 = 0.
    const t = table(15, 5, 0, 0);
    expect(agreement(t)).toBe(0.75);
    expect(cohensKappa(t)).toBe(0);
    expect(calibrationOf(t).whyNot).toEqual(['agreement 0.750 below 0.8', 'kappa 0.000 below 0.6']);
  });

  it('complete disagreement: a=0 b=10 c=10 d=0 gives kappa −1', () => {
    // po = 0; pe = (10·10 + 10·10) / 400 = 0.5; kappa = (0 − 0.5) / 0.5 = −1.
    expect(cohensKappa(table(0, 10, 10, 0))).toBe(-1);
  });

  it('kappa is undefined when both raters gave every item one and the same label (pe = 1)', () => {
    // a=25: judge pass 25, human pass 25; pe = (25·25 + 0·0) / 625 = 1, so 1 − pe = 0.
    const t = table(25, 0, 0, 0);
    expect(agreement(t)).toBe(1);
    expect(cohensKappa(t)).toBeNull();
    expect(calibrationOf(t)).toMatchObject({
      calibrated: false,
      whyNot: ['kappa undefined: the judge and the human each gave every item the same label'],
    });
    // Both always fail: d=30, pe = (0 + 30·30) / 900 = 1.
    expect(cohensKappa(table(0, 0, 0, 30))).toBeNull();
  });

  it('an empty table has neither agreement nor kappa', () => {
    expect(agreement(emptyTable())).toBeNull();
    expect(cohensKappa(emptyTable())).toBeNull();
    expect(calibrationOf(emptyTable()).whyNot).toEqual([
      '0 labels with a judge verdict, fewer than 20',
      'agreement — below 0.8',
      'kappa undefined: no labels',
    ]);
  });

  it('tally puts each verdict pair in its cell', () => {
    const t = emptyTable();
    tally(t, true, true);
    tally(t, true, false);
    tally(t, true, false);
    tally(t, false, true);
    tally(t, false, false);
    expect(t).toEqual(table(1, 2, 1, 1));
  });
});
