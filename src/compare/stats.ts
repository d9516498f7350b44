// Repeat statistics per side and scenario (docs/statistics.md): per-run pass rate, all-N, pass@k,
// pass^k and a Wilson interval, plus suite-level averages. pass^k follows tau2-bench: C(c,k)/C(n,k).
import type { SideStats, SideSummary, SuiteStats } from '../model/report.js';

/** The two-sided 95% normal quantile. */
export const Z95 = 1.959963984540054;

function checkCounts(what: string, n: number, c: number, k?: number): void {
  const ok =
    Number.isInteger(n) &&
    Number.isInteger(c) &&
    n >= 0 &&
    c >= 0 &&
    c <= n &&
    (k === undefined || (Number.isInteger(k) && k >= 1));
  if (!ok) {
    const got = k === undefined ? `n=${n}, c=${c}` : `n=${n}, c=${c}, k=${k}`;
    const need = k === undefined ? 'integers 0 <= c <= n' : 'integers 0 <= c <= n and k >= 1';
    throw new RangeError(`${what} needs ${need}; got ${got}`);
  }
}

/** C(a,k)/C(n,k) as a running product, which stays exact enough where the binomials overflow. */
function binomialRatio(a: number, n: number, k: number): number {
  let r = 1;
  for (let i = 0; i < k; i++) {
    if (a - i <= 0) return 0;
    r *= (a - i) / (n - i);
  }
  return r;
}

/** Unbiased pass@k, 1 - C(n-c,k)/C(n,k): the chance that at least one of k repeats passes; null when k > n. */
export function passAtK(n: number, c: number, k: number): number | null {
  checkCounts('pass@k', n, c, k);
  if (k > n) return null;
  return 1 - binomialRatio(n - c, n, k);
}

/** pass^k, C(c,k)/C(n,k): the chance that all of k repeats pass; null when k > n. */
export function passHatK(n: number, c: number, k: number): number | null {
  checkCounts('pass^k', n, c, k);
  if (k > n) return null;
  return binomialRatio(c, n, k);
}

/** The Wilson score interval of c successes in n trials (95% by default); null when n is 0. */
export function wilsonInterval(n: number, c: number, z = Z95): { low: number; high: number } | null {
  checkCounts('the Wilson interval', n, c);
  if (n === 0) return null;
  const p = c / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return { low: Math.max(0, center - half), high: Math.min(1, center + half) };
}

/** The default k list: 1 and N (the number of repeats). */
export function defaultKs(repeats: number): number[] {
  return repeats > 1 ? [1, repeats] : [1];
}

/** Statistics of one side on one scenario from its run counts; repeats that could not be graded are excluded. */
export function sideStats(
  counts: Pick<SideSummary, 'runs' | 'passes' | 'infraErrors'>,
  ks: number[] = defaultKs(counts.runs),
): SideStats {
  const excluded = counts.infraErrors ?? 0;
  const n = counts.runs - excluded;
  const c = counts.passes;
  checkCounts('side statistics', n, c);
  const passAt: Record<string, number | null> = {};
  const passHat: Record<string, number | null> = {};
  for (const k of [...new Set(ks)].sort((a, b) => a - b)) {
    passAt[String(k)] = passAtK(n, c, k);
    passHat[String(k)] = passHatK(n, c, k);
  }
  return {
    n,
    c,
    pass_rate: n === 0 ? null : c / n,
    all_n: n > 0 && excluded === 0 && c === n,
    pass_at_k: passAt,
    pass_hat_k: passHat,
    wilson: wilsonInterval(n, c),
  };
}

function mean(values: number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

function meanByK(
  stats: SideStats[],
  pick: (s: SideStats) => Record<string, number | null>,
): Record<string, number | null> {
  const ks = [...new Set(stats.flatMap((s) => Object.keys(pick(s))))].sort((a, b) => Number(a) - Number(b));
  const out: Record<string, number | null> = {};
  for (const k of ks) {
    out[k] = mean(stats.map((s) => pick(s)[k]).filter((v): v is number => typeof v === 'number'));
  }
  return out;
}

/** Suite-level averages of one side, over the scenarios with at least one graded repeat. */
export function suiteStats(perScenario: SideStats[]): SuiteStats {
  const graded = perScenario.filter((s) => s.n > 0);
  return {
    scenarios: graded.length,
    excluded: perScenario.length - graded.length,
    pass_rate: mean(graded.map((s) => s.pass_rate as number)),
    all_n: graded.length === 0 ? null : graded.filter((s) => s.all_n).length / graded.length,
    pass_at_k: meanByK(graded, (s) => s.pass_at_k),
    pass_hat_k: meanByK(graded, (s) => s.pass_hat_k),
  };
}
