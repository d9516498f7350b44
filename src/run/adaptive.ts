// Adaptive repeats: every case starts at `min` repeats per side; a case gets another look (more
// repeats on both sides, same seeds) only while the sequential test is undecided, up to `max`.

import { summarizeSide } from '../compare/summary.js';
import type { Scenario } from '../config/schema.js';
import { expandEpisodes, type PlannedEpisode } from '../plan/expand.js';
import type { GradedEpisode, Side } from '../record.js';
import { type CaseDecision, decideCase } from '../stats/case-decision.js';
import { nextLook, type SequentialPolicy } from '../stats/sequential.js';

export interface AdaptiveInput {
  scenarios: Scenario[];
  /** ['base', 'head'], or ['head'] alone (then every case stops at min). */
  sides: Side[];
  suiteHash: string;
  policy: SequentialPolicy;
  /** Runs and grades a batch of episodes; `episodesOf` sees them once it resolves. */
  runBatch: (episodes: PlannedEpisode[]) => Promise<void>;
  /** The graded episodes of one case so far, by side. */
  episodesOf: (scenarioId: string) => Record<Side, GradedEpisode[]>;
  signal?: AbortSignal;
  /** Told after each look how many cases go on. */
  onLook?: (look: { repeats: number; cases: number; goOn: number }) => void;
}

/** Runs looks until every case is decided or at max; returns each case's last decision. */
export async function runAdaptive(input: AdaptiveInput): Promise<Map<string, CaseDecision>> {
  const { policy, sides } = input;
  const decisions = new Map<string, CaseDecision>();
  let active = input.scenarios;
  let done = 0;
  while (active.length > 0 && !input.signal?.aborted) {
    const target = nextLook(done, policy);
    // Repeat numbers continue where the last look stopped, so the seeds are the same on both sides.
    await input.runBatch(expandEpisodes(active, sides, target - done, input.suiteHash, done + 1));
    done = target;
    const goOn: Scenario[] = [];
    for (const scenario of active) {
      const g = input.episodesOf(scenario.id);
      const base = sides.includes('base') ? summarizeSide(scenario, g.base) : null;
      const decision = decideCase(base, summarizeSide(scenario, g.head), policy);
      decisions.set(scenario.id, decision);
      if (decision.more && done < policy.max) goOn.push(scenario);
    }
    input.onLook?.({ repeats: done, cases: active.length, goOn: goOn.length });
    active = goOn;
  }
  return decisions;
}

/** The adaptive policy of a `repeats` setting: null for a plain number or min equal to max. */
export function adaptivePolicy(repeats: number | { min: number; max: number }): SequentialPolicy | null {
  if (typeof repeats === 'number' || repeats.min >= repeats.max) return null;
  return { min: repeats.min, max: repeats.max };
}
