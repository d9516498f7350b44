// Finds the cheapest adaptive repeats range that meets the targets, from exact error rates:
//   node --import tsx bench/decisions/search.ts
// For every min 4..10 and max from min + 2 to 40 it computes, with the real sequential test, the false BLOCK
// rate of unchanged agents failing 0%, 5% and 20% of runs, the detection of 0% -> 30% and
// 5% -> 40%, and the mean episodes per case (both sides) on those agents and on 0% -> 10%. A range
// qualifies when every false BLOCK rate is <= 5% minus a margin, every detection rate >= 90% plus a
// margin (room for the sampling error of the 2,000-case benchmark) and every agent costs fewer
// episodes than fixed N = 20 (40). Cheapest = fewest mean episodes over the six agents.
import { outcomeOf, REGRESSIONS, UNCHANGED_RATES } from '../../src/stats/error-rates.js';

const FALSE_BLOCK_MAX = 0.045;
const DETECTION_MIN = 0.91;

const agents = [
  ...UNCHANGED_RATES.map((r) => ({ base: r, head: r, unchanged: true })),
  { base: 0, head: 0.1, unchanged: false },
  ...REGRESSIONS.map((r) => ({ ...r, unchanged: false })),
];

interface Row {
  min: number;
  max: number;
  worstFalse: number;
  worstDetection: number;
  mostEpisodes: number;
  meanEpisodes: number;
}

const rows: Row[] = [];
for (let min = 4; min <= 10; min++) {
  for (let max = min + 2; max <= 40; max++) {
    const out = agents.map((a) => ({ a, o: outcomeOf({ min, max }, a.base, a.head)! }));
    const worstFalse = Math.max(...out.filter((x) => x.a.unchanged).map((x) => x.o.block));
    const worstDetection = Math.min(
      ...out
        .filter((x) => REGRESSIONS.some((r) => r.base === x.a.base && r.head === x.a.head))
        .map((x) => x.o.block),
    );
    const episodes = out.map((x) => x.o.episodes);
    rows.push({
      min,
      max,
      worstFalse,
      worstDetection,
      mostEpisodes: Math.max(...episodes),
      meanEpisodes: episodes.reduce((s, e) => s + e, 0) / episodes.length,
    });
  }
}
const qualifies = (r: Row) =>
  r.worstFalse <= FALSE_BLOCK_MAX && r.worstDetection >= DETECTION_MIN && r.mostEpisodes < 40;
const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
const ok = rows.filter(qualifies).sort((a, b) => a.meanEpisodes - b.meanEpisodes);
console.log(
  `Ranges with false BLOCK <= ${pct(FALSE_BLOCK_MAX)}, detection >= ${pct(DETECTION_MIN)}, under 40 episodes on every agent, cheapest first:`,
);
console.log();
console.log('| range | worst false BLOCK | worst detection | most ep | mean ep |');
console.log('|---|---|---|---|---|');
for (const r of ok.slice(0, 10)) {
  console.log(
    `| ${r.min}..${r.max} | ${pct(r.worstFalse)} | ${pct(r.worstDetection)} | ${r.mostEpisodes.toFixed(1)} | ${r.meanEpisodes.toFixed(2)} |`,
  );
}
if (ok.length === 0) console.log('| none | | | | |');
const bare = rows
  .filter((r) => r.worstFalse <= 0.05 && r.worstDetection >= 0.9 && r.mostEpisodes < 40)
  .sort((a, b) => a.meanEpisodes - b.meanEpisodes)[0];
if (bare) {
  console.log();
  console.log(
    `Without the margin the cheapest is ${bare.min}..${bare.max} (false BLOCK ${pct(bare.worstFalse)}, detection ${pct(bare.worstDetection)}, mean ${bare.meanEpisodes.toFixed(2)} ep).`,
  );
}
