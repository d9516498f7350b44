// Adaptive repeats: every case starts at `min` repeats per side; a case gets another look (more
// repeats on both sides, same seeds) only while the sequential test is undecided, up to `max`.
// Episodes already in `episodesOf` before a look (base episodes from a cache of earlier runs) count:
// a look runs only the repeat numbers a side does not have yet, and the test reads all of them.

import { summarizeSide } from '../compare/summary.js';
import type { Scenario } from '../config/schema.js';
import type { GradedEpisode, Side } from '../model/episode.js';
import { expandEpisodes, type PlannedEpisode } from '../plan/expand.js';
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
  /**
   * The graded episodes of one case so far, by side, including any it held before the first look
   * (a base side's cached episodes of the same pinned suite, with their repeat numbers): those
   * repeats are not run again and count toward the test.
   */
  episodesOf: (scenarioId: string) => Record<Side, GradedEpisode[]>;
  signal?: AbortSignal;
  /**
   * Judge expectations on criteria not calibrated for the judge's model, per scenario: the loop
   * counts expectations as the report does, so its decisions are the report's.
   */
  uncalibrated?: (scenario: Scenario) => ReadonlySet<string>;
  /** Fixed repeats are one look at min = max: no decision is needed, and none is made. */
  decide?: boolean;
  /** Told after each look how many cases go on. */
  onLook?: (look: { repeats: number; cases: number; goOn: number }) => void;
}

/** The repeat numbers each side of a case already has. */
function repeatsHeld(episodes: Record<Side, GradedEpisode[]>): Record<Side, Set<number>> {
  return {
    base: new Set(episodes.base.map((g) => g.record.repeat)),
    head: new Set(episodes.head.map((g) => g.record.repeat)),
  };
}

/** Runs looks until every case is decided or at max; returns each case's last decision. */
export async function runAdaptive(input: AdaptiveInput): Promise<Map<string, CaseDecision>> {
  const { policy, sides } = input;
  const decisions = new Map<string, CaseDecision>();
  // Only the base may bring episodes from elsewhere: the head is the code under review, and
  // episodes it did not run here could be anything it liked.
  const early = input.scenarios.find((s) => input.episodesOf(s.id).head.length > 0);
  if (early)
    throw new Error(
      `adaptive repeats: head episodes of ${early.id} exist before the first look; only base episodes may come from a cache`,
    );
  let active = input.scenarios;
  let done = 0;
  while (active.length > 0 && !input.signal?.aborted) {
    const target = nextLook(done, policy);
    // Repeat numbers continue where the last look stopped, so the seeds are the same on both sides;
    // a repeat a side already has (cached) is not run again.
    const planned = expandEpisodes(active, sides, target - done, input.suiteHash, done + 1);
    const have = new Map(active.map((s) => [s.id, repeatsHeld(input.episodesOf(s.id))]));
    const missing = planned.filter((p) => !have.get(p.scenario.id)![p.side].has(p.repeat));
    if (missing.length > 0) await input.runBatch(missing);
    done = target;
    if (input.decide === false && done >= policy.max) break;
    const goOn: Scenario[] = [];
    for (const scenario of active) {
      const g = input.episodesOf(scenario.id);
      const skip = input.uncalibrated?.(scenario);
      const base = sides.includes('base') ? summarizeSide(scenario, g.base, undefined, skip) : null;
      const decision = decideCase(base, summarizeSide(scenario, g.head, undefined, skip), policy);
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
