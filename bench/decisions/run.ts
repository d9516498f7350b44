// Prints the decision benchmark table and checks the default's targets:
//   node --import tsx bench/decisions/run.ts [cases per row, default 2000]
// Every row runs the same synthetic agent through the real scheduler, sequential test and
// classification under fixed N=3 (the demo's), N=5, N=20, the earlier recommendation 8..24 and the
// default (what a stategate.yml without `repeats` runs). Beside each simulated rate of the default
// stands its exact rate (src/stats/error-rates.ts: the real decision code summed over every path of
// failure counts, the numbers the report prints). A target is met when the exact rate meets it and
// the simulation agrees with the exact rate within sampling error (3 standard errors): the exact
// rate decides, because a simulated rate 0.5 points from a target is a coin flip at 2,000 cases.
// The exit code is 1 when the default misses a target.
import { DEFAULT_REPEATS } from '../../src/config/schema.js';
import {
  DETECTION_TARGET,
  FALSE_BLOCK_TARGET,
  outcomeOf,
  REGRESSIONS,
  UNCHANGED_RATES,
} from '../../src/stats/error-rates.js';
import { type RepeatPolicy, runDecisions } from './decisions.js';

const cases = Number(process.argv[2] ?? 2000);
if (!Number.isInteger(cases) || cases < 1) {
  console.error(`usage: bench/decisions/run.ts [cases per row]; got ${JSON.stringify(process.argv[2])}`);
  process.exit(2);
}

interface Agent {
  name: string;
  base: number;
  head: number;
  kind: 'unchanged' | 'regression' | 'other';
}

const pctName = (x: number) => `${Math.round(x * 100)}%`;
const agents: Agent[] = [
  ...UNCHANGED_RATES.map(
    (r): Agent => ({ name: `unchanged ${pctName(r)}`, base: r, head: r, kind: 'unchanged' }),
  ),
  { name: '0% -> 10%', base: 0, head: 0.1, kind: 'other' },
  ...REGRESSIONS.map(
    (r): Agent => ({ name: `${pctName(r.base)} -> ${pctName(r.head)}`, ...r, kind: 'regression' }),
  ),
];

const DEFAULT = 'default 7..32';
const policies: { name: string; policy: RepeatPolicy }[] = [
  { name: 'fixed N=3', policy: { fixed: 3 } },
  { name: 'fixed N=5', policy: { fixed: 5 } },
  { name: 'fixed N=20', policy: { fixed: 20 } },
  { name: 'adaptive 8..24', policy: { adaptive: { min: 8, max: 24 } } },
  {
    name: `default ${DEFAULT_REPEATS.min}..${DEFAULT_REPEATS.max}`,
    policy: { adaptive: { ...DEFAULT_REPEATS } },
  },
];
if (policies.at(-1)!.name !== DEFAULT)
  throw new Error(`rename the default column: it is ${policies.at(-1)!.name}`);

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const started = performance.now();
console.log(
  `${cases} cases per row. BLOCK = classified new-critical-failure; ep = episodes per case, both sides, mean.`,
);
console.log();
console.log(`| agent | ${policies.map((p) => p.name).join(' | ')} |`);
console.log(`|---|${policies.map(() => '---').join('|')}|`);

// results[agent][policy] = { rate, episodes }
const results: { rate: number; episodes: number }[][] = [];
let salt = 0;
for (const a of agents) {
  const row: { rate: number; episodes: number }[] = [];
  for (const p of policies) {
    salt++;
    const r = await runDecisions({ base: a.base, head: a.head }, p.policy, cases, salt);
    row.push({ rate: r.blocked / r.cases, episodes: r.episodes / r.cases });
  }
  results.push(row);
  const what = { unchanged: 'false BLOCK', regression: 'detection', other: 'detection' }[a.kind];
  const cells = row.map((r) => `${pct(r.rate)}, ${r.episodes.toFixed(1)} ep`);
  console.log(`| ${a.name} (${what}) | ${cells.join(' | ')} |`);
}

// The default's row: simulated beside exact, and whether the simulation agrees with the exact rate
// within 3 standard errors (it checks the real loop against the arithmetic the report uses).
const d = policies.length - 1;
const fixed20 = policies.findIndex((p) => p.name === 'fixed N=20');
console.log();
console.log(`The default (${DEFAULT}): simulated, exact, and the targets.`);
console.log();
console.log('| agent | simulated | exact | agrees (3 SE) | target | met |');
console.log('|---|---|---|---|---|---|');
let allMet = true;
for (const [i, a] of agents.entries()) {
  const sim = results[i][d];
  const exact = outcomeOf({ ...DEFAULT_REPEATS }, a.base, a.head)!;
  const se = Math.sqrt(Math.max(exact.block * (1 - exact.block), 1e-6) / cases);
  const agrees = Math.abs(sim.rate - exact.block) <= 3 * se + 1e-9;
  let target = `fewer ep than fixed N=20 (${results[i][fixed20].episodes.toFixed(1)})`;
  let met = exact.episodes < results[i][fixed20].episodes;
  if (a.kind === 'unchanged') {
    target = `false BLOCK <= ${pct(FALSE_BLOCK_TARGET)}; ${target}`;
    met &&= exact.block <= FALSE_BLOCK_TARGET;
  } else if (a.kind === 'regression') {
    target = `detection >= ${pct(DETECTION_TARGET)}; ${target}`;
    met &&= exact.block >= DETECTION_TARGET;
  }
  allMet &&= met && agrees;
  console.log(
    `| ${a.name} | ${pct(sim.rate)}, ${sim.episodes.toFixed(1)} ep | ${(exact.block * 100).toFixed(2)}%, ${exact.episodes.toFixed(1)} ep | ${agrees ? 'yes' : '**no**'} | ${target} | ${met ? 'met' : '**not met**'} |`,
  );
}
console.log();
console.log(
  allMet
    ? `The default meets every target.`
    : `**The default misses a target** (or the simulation disagrees).`,
);
console.log(`Took ${((performance.now() - started) / 1000).toFixed(0)} s.`);
process.exitCode = allMet ? 0 : 1;
