// Small facts about graded episodes that every comparison step agrees on.
import type { Scenario } from '../config/schema.js';
import { elide } from '../model/call-text.js';
import { COMPLETED, type GradedEpisode } from '../model/episode.js';

export { COMPLETED };

/** Whether an episode could be graded: no error outside the agent and no expectation that errored. */
export function isGradable(e: GradedEpisode): boolean {
  return !e.record.infraError && e.results.every((r) => r.verdict !== 'error');
}

/** Whether an episode passed every expectation (an episode that could not be graded never passes). */
export function episodePassed(e: GradedEpisode): boolean {
  return e.results.length > 0 && e.results.every((r) => r.verdict === 'pass') && !e.record.infraError;
}

/** Why an episode could not be graded, in a few words (long messages elided); null when it could. */
export function ungradableReason(e: GradedEpisode): string | null {
  if (e.record.infraError) return elide(`${e.record.infraError.stage}: ${e.record.infraError.message}`, 200);
  const errored = e.results.find((r) => r.verdict === 'error');
  return errored ? elide(`${errored.id}: ${errored.message}`, 200) : null;
}

/** Episodes in repeat order, so every choice of "the first" is deterministic. */
export function inRepeatOrder(episodes: readonly GradedEpisode[]): GradedEpisode[] {
  return [...episodes].sort(
    (a, b) =>
      a.record.repeat - b.record.repeat ||
      (a.record.episode < b.record.episode ? -1 : a.record.episode > b.record.episode ? 1 : 0),
  );
}

/** The scenario's expectations with `completed` first, as id and criticality. */
export function expectationsOf(scenario: Scenario): { id: string; critical: boolean }[] {
  return [
    { id: COMPLETED, critical: true },
    ...scenario.expect.map((e) => ({ id: e.id, critical: e.critical ?? false })),
  ];
}
