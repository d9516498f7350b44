// Prints the decision benchmark table and its targets:
//   node --import tsx bench/decisions/run.ts [cases per row, default 2000]
// Every row runs the same synthetic agent through the real scheduler, sequential test and
// classification under fixed N=5, fixed N=20, the example policy 3..20 and the
// recommended 8..24 (docs/statistics.md says why 8..24).
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
  kind: 'unchanged' | 'regression';
}

const agents: Agent[] = [
  { name: 'unchanged 0%', base: 0, head: 0, kind: 'unchanged' },
  { name: 'unchanged 5%', base: 0.05, head: 0.05, kind: 'unchanged' },
  { name: 'unchanged 20%', base: 0.2, head: 0.2, kind: 'unchanged' },
  { name: '0% -> 10%', base: 0, head: 0.1, kind: 'regression' },
  { name: '0% -> 30%', base: 0, head: 0.3, kind: 'regression' },
  { name: '5% -> 40%', base: 0.05, head: 0.4, kind: 'regression' },
];

const policies: { name: string; policy: RepeatPolicy }[] = [
  { name: 'fixed N=5', policy: { fixed: 5 } },
  { name: 'fixed N=20', policy: { fixed: 20 } },
  { name: 'adaptive 3..20', policy: { adaptive: { min: 3, max: 20 } } },
  { name: 'adaptive 8..24', policy: { adaptive: { min: 8, max: 24 } } },
];

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
  const what = a.kind === 'unchanged' ? 'false BLOCK' : 'detection';
  const cells = row.map((r) => `${pct(r.rate)}, ${r.episodes.toFixed(1)} ep`);
  console.log(`| ${a.name} (${what}) | ${cells.join(' | ')} |`);
}

// The targets of the adaptive policies: false BLOCK <= 5% on every unchanged agent, detection >= 90%
// of 0% -> 30%, and fewer episodes than fixed N=20 on every row.
const fixed20 = policies.findIndex((p) => p.name === 'fixed N=20');
console.log();
console.log(
  '| policy | false BLOCK <= 5% | detection of 0% -> 30% >= 90% | fewer episodes than fixed N=20 |',
);
console.log('|---|---|---|---|');
for (const [j, p] of policies.entries()) {
  if (!('adaptive' in p.policy)) continue;
  const worstFalse = Math.max(...agents.map((a, i) => (a.kind === 'unchanged' ? results[i][j].rate : 0)));
  const detection = results[agents.findIndex((a) => a.name === '0% -> 30%')][j].rate;
  const mostEpisodes = Math.max(...results.map((row) => row[j].episodes));
  const fewer = results.every((row) => row[j].episodes < row[fixed20].episodes);
  const mark = (met: boolean) => (met ? 'met' : '**not met**');
  console.log(
    `| ${p.name} | ${mark(worstFalse <= 0.05)} (worst ${pct(worstFalse)}) | ${mark(detection >= 0.9)} (${pct(detection)}) | ${mark(fewer)} (at most ${mostEpisodes.toFixed(1)} ep) |`,
  );
}
console.log();
console.log(`Took ${((performance.now() - started) / 1000).toFixed(0)} s.`);
