// Prints the decision benchmark table: `node --import tsx bench/decisions/run.ts [cases]`.
import { type RepeatPolicy, runDecisions } from './decisions.js';

const cases = Number(process.argv[2] ?? 1000);

const agents: { name: string; base: number; head: number; kind: 'unchanged' | 'regression' }[] = [
  { name: 'unchanged 0%', base: 0, head: 0, kind: 'unchanged' },
  { name: 'unchanged 5%', base: 0.05, head: 0.05, kind: 'unchanged' },
  { name: 'unchanged 20%', base: 0.2, head: 0.2, kind: 'unchanged' },
  { name: 'regression 0%->10%', base: 0, head: 0.1, kind: 'regression' },
  { name: 'regression 0%->30%', base: 0, head: 0.3, kind: 'regression' },
  { name: 'regression 5%->40%', base: 0.05, head: 0.4, kind: 'regression' },
];

const policies: { name: string; policy: RepeatPolicy }[] = [
  { name: 'fixed N=5', policy: { fixed: 5 } },
  { name: 'fixed N=20', policy: { fixed: 20 } },
  { name: 'adaptive 3..20', policy: { adaptive: { min: 3, max: 20 } } },
  { name: 'adaptive 7..20', policy: { adaptive: { min: 7, max: 20 } } },
];

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
console.log(
  `${cases} cases per row; BLOCK = classified new-critical-failure; episodes = both sides, mean per case`,
);
console.log('| agent | policy | BLOCK rate | episodes per case |');
console.log('|---|---|---|---|');
let salt = 0;
for (const a of agents) {
  for (const p of policies) {
    salt++;
    const r = await runDecisions({ base: a.base, head: a.head }, p.policy, cases, salt);
    const what = a.kind === 'unchanged' ? 'false BLOCK' : 'detection';
    console.log(
      `| ${a.name} | ${p.name} | ${pct(r.blocked / r.cases)} (${what}) | ${(r.episodes / r.cases).toFixed(1)} |`,
    );
  }
}
