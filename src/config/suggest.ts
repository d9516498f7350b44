// "Did you mean" for misspelt keys, tool names, fault names and kinds.

/** The candidate closest to `word` by edit distance, when it is close enough to be a likely typo. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.max(1, Math.floor(word.length / 3));
  const list = [...candidates];
  // `expectations` for `expect`: a longer or shorter form of a name is a likely slip too.
  const lower = word.toLowerCase();
  const affix = list.find(
    (c) =>
      c.length >= 4 &&
      lower.length >= 4 &&
      (lower.startsWith(c.toLowerCase()) || c.toLowerCase().startsWith(lower)),
  );
  if (affix) return affix;
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const c of list) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** `; did you mean 'x'?` or nothing. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const c = closest(word, candidates);
  return c === undefined || c === word ? '' : `; did you mean '${c}'?`;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return Math.abs(a.length - b.length);
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/** A value as a person wrote it, for "got ..." in messages: short, quoted when text. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'an empty value';
  if (typeof value === 'string') {
    const short = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return `'${short.replace(/\n/g, '\\n')}'`;
  }
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return String(value);
}
