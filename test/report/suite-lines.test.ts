// The suite line of each side counts the scenarios no repeat could grade in the whole: a BLOCK whose
// only failing case was ungraded must not read "passed all-N in 4 of 4 scenarios (100%)".
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/model/report.js';
import { suiteLines } from '../../src/report/format.js';
import { sampleReport } from './fixtures.js';

function withStats(head: NonNullable<Report['stats']>['head']): Report {
  const report = sampleReport();
  return { ...report, stats: { ...report.stats!, head } };
}

describe('suite lines', () => {
  it('count ungraded scenarios in the whole and name them', () => {
    const report = withStats({
      scenarios: 4,
      excluded: 1,
      pass_rate: 1,
      all_n: 1,
      pass_at_k: { '1': 1 },
      pass_hat_k: { '1': 1 },
    });
    const head = suiteLines(report).find((l) => l.startsWith('head:'));
    expect(head).toBe('head: passed all-N in 4 of 5 scenarios (80%), 1 not graded, per-run pass rate 100%');
  });

  it('say nothing of ungraded scenarios when every one was graded', () => {
    const report = withStats({
      scenarios: 4,
      excluded: 0,
      pass_rate: 0.75,
      all_n: 0.75,
      pass_at_k: { '1': 0.75 },
      pass_hat_k: { '1': 0.75 },
    });
    expect(suiteLines(report).find((l) => l.startsWith('head:'))).toBe(
      'head: passed all-N in 3 of 4 scenarios (75%), per-run pass rate 75%',
    );
  });
});
