// The decision benchmark: how often each repeat policy BLOCKs an unchanged agent or a regression,
// and how many episodes it spends, through the real scheduler, sequential test and classification.

import { compareSuite } from '../../src/compare/suite.js';
import type { GradedEpisode, Side } from '../../src/model/episode.js';
import { expandEpisodes, type PlannedEpisode } from '../../src/plan/expand.js';
import { runAdaptive } from '../../src/run/adaptive.js';
import { schedule } from '../../src/run/scheduler.js';
import type { SequentialPolicy } from '../../src/stats/sequential.js';
import { type FailureRates, syntheticEpisode, syntheticScenario } from './synthetic.js';

export type RepeatPolicy = { fixed: number } | { adaptive: SequentialPolicy };

export interface DecisionResult {
  cases: number;
  /** Cases classified new-critical-failure (the default BLOCK class). */
  blocked: number;
  /** Episodes run, both sides together. */
  episodes: number;
}

const SIDES: Side[] = ['base', 'head'];

/** Runs `cases` independent cases of the synthetic agent under one repeat policy and counts the BLOCKs. */
export async function runDecisions(
  rates: FailureRates,
  policy: RepeatPolicy,
  cases: number,
  salt = 0,
): Promise<DecisionResult> {
  const scenarios = Array.from({ length: cases }, (_, i) => syntheticScenario(`case-${salt}-${i}`));
  const suiteHash = `decisions-${salt}`;
  const graded = new Map<string, Record<Side, GradedEpisode[]>>();
  for (const s of scenarios) graded.set(s.id, { base: [], head: [] });
  let episodes = 0;
  const runBatch = async (batch: PlannedEpisode[]) => {
    await schedule(batch, async (p) => syntheticEpisode(p, rates, salt), {
      concurrency: 4,
      onDone: (g, p) => {
        graded.get(p.scenario.id)![p.side].push(g);
        episodes++;
      },
    });
  };
  const sequential = 'adaptive' in policy ? policy.adaptive : undefined;
  if (sequential)
    await runAdaptive({
      scenarios,
      sides: SIDES,
      suiteHash,
      policy: sequential,
      runBatch,
      episodesOf: (id) => graded.get(id)!,
    });
  else await runBatch(expandEpisodes(scenarios, SIDES, (policy as { fixed: number }).fixed, suiteHash));
  const report = compareSuite({
    cases: scenarios.map((scenario) => ({ scenario, ...graded.get(scenario.id)! })),
    pin: { suite_hash: suiteHash, template_hash: suiteHash, scenarios: {} },
    sides: { base: { ref: 'base', sha: null }, head: { ref: 'head', sha: null } },
    engine: 'postgres',
    sequential,
  });
  return { cases, blocked: report.counts['new-critical-failure'], episodes };
}
