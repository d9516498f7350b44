// Barnard's exact unconditional test, one-sided: is the head's failure rate higher than the base's?
// Tables are ordered by the pooled-variance z statistic; the p-value is the largest tail probability
// over the common failure rate (the nuisance parameter), searched on a fine grid.

/** The nuisance grid: 1/1000 .. 999/1000. */
const GRID = Array.from({ length: 999 }, (_, i) => (i + 1) / 1000);

/** Above this many tables the exact sum gets slow; the normal approximation is then close enough. */
const EXACT_LIMIT = 40_000;

const cache = new Map<string, number>();

function checkCounts(fails: number, runs: number, side: string): void {
  if (!Number.isInteger(runs) || !Number.isInteger(fails) || runs < 1 || fails < 0 || fails > runs) {
    throw new RangeError(
      `Barnard's test needs integers 0 <= fails <= runs and runs >= 1 on the ${side}; got ${fails} of ${runs}`,
    );
  }
}

/** The pooled-variance z statistic of head rate minus base rate; 0 when no variance (all fail or none). */
export function pooledZ(headFails: number, headRuns: number, baseFails: number, baseRuns: number): number {
  const pooled = (headFails + baseFails) / (headRuns + baseRuns);
  const variance = pooled * (1 - pooled) * (1 / headRuns + 1 / baseRuns);
  if (variance === 0) return 0;
  return (headFails / headRuns - baseFails / baseRuns) / Math.sqrt(variance);
}

/** Binomial probabilities of 0..n successes at rate p, by the recurrence on the ratio of terms. */
function binomialPmf(n: number, p: number): Float64Array {
  const out = new Float64Array(n + 1);
  out[0] = (1 - p) ** n;
  const ratio = p / (1 - p);
  for (let k = 1; k <= n; k++) out[k] = out[k - 1] * ((n - k + 1) / k) * ratio;
  return out;
}

/** The standard normal upper tail, by the complementary error function (Numerical Recipes erfc). */
function normalUpperTail(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * x);
  const erfc =
    t *
    Math.exp(
      -x * x -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886187 +
                            t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return z >= 0 ? erfc / 2 : 1 - erfc / 2;
}

/**
 * The one-sided p-value that the head fails more often than the base, from failure counts: the
 * largest chance, over a common failure rate, of a z statistic at least as large as the observed one.
 */
export function barnardHeadWorse(
  headFails: number,
  headRuns: number,
  baseFails: number,
  baseRuns: number,
): number {
  checkCounts(headFails, headRuns, 'head');
  checkCounts(baseFails, baseRuns, 'base');
  const key = `${headFails}/${headRuns}/${baseFails}/${baseRuns}`;
  const known = cache.get(key);
  if (known !== undefined) return known;

  const observed = pooledZ(headFails, headRuns, baseFails, baseRuns);
  let p: number;
  if ((headRuns + 1) * (baseRuns + 1) > EXACT_LIMIT) {
    p = normalUpperTail(observed);
  } else {
    // The tables at least as extreme as the observed one do not depend on the nuisance rate.
    const extreme: [number, number][] = [];
    for (let h = 0; h <= headRuns; h++) {
      for (let b = 0; b <= baseRuns; b++) {
        if (pooledZ(h, headRuns, b, baseRuns) >= observed - 1e-9) extreme.push([h, b]);
      }
    }
    p = 0;
    for (const rate of GRID) {
      const ph = binomialPmf(headRuns, rate);
      const pb = binomialPmf(baseRuns, rate);
      let tail = 0;
      for (const [h, b] of extreme) tail += ph[h] * pb[b];
      if (tail > p) p = tail;
    }
    p = Math.min(1, p);
  }
  cache.set(key, p);
  return p;
}

/**
 * The p-value of every table with `runs` repeats on both sides, indexed [headFails * (runs + 1) +
 * baseFails]: the values barnardHeadWorse gives one at a time, at the cost of one of them. Sorted by
 * z, each table's tail is a prefix sum. The exact error rates of a policy need all of them.
 */
export function equalRunsTable(runs: number): Float64Array {
  checkCounts(0, runs, 'both sides');
  const tables: { h: number; b: number; z: number }[] = [];
  for (let h = 0; h <= runs; h++) {
    for (let b = 0; b <= runs; b++) tables.push({ h, b, z: pooledZ(h, runs, b, runs) });
  }
  tables.sort((x, y) => y.z - x.z);
  // The last table (in that order) at least as extreme as each one, with barnardHeadWorse's tolerance.
  const last = tables.map((t) => {
    let lo = 0;
    let hi = tables.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (tables[mid].z >= t.z - 1e-9) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  });
  const out = new Float64Array(tables.length);
  const prefix = new Float64Array(tables.length);
  for (const rate of GRID) {
    const pmf = binomialPmf(runs, rate);
    let sum = 0;
    for (let i = 0; i < tables.length; i++) {
      sum += pmf[tables[i].h] * pmf[tables[i].b];
      prefix[i] = sum;
    }
    for (let i = 0; i < tables.length; i++) {
      const k = tables[i].h * (runs + 1) + tables[i].b;
      if (prefix[last[i]] > out[k]) out[k] = prefix[last[i]];
    }
  }
  for (let k = 0; k < out.length; k++) out[k] = Math.min(1, out[k]);
  return out;
}

/** Puts equalRunsTable(runs) in the cache barnardHeadWorse reads (within its exact limit). */
export function fillEqualRuns(runs: number): void {
  if ((runs + 1) * (runs + 1) > EXACT_LIMIT || cache.has(`0/${runs}/0/${runs}`)) return;
  const table = equalRunsTable(runs);
  for (let h = 0; h <= runs; h++) {
    for (let b = 0; b <= runs; b++) {
      const key = `${h}/${runs}/${b}/${runs}`;
      if (!cache.has(key)) cache.set(key, table[h * (runs + 1) + b]);
    }
  }
}
