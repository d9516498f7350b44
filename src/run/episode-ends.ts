// How a run's episodes ended, counted as they finish: a run in which none completed tested nothing,
// and says why (the most common end, and the agent.pass_env variables the environment lacks).
import { COMPLETED } from '../compare/episodes.js';
import type { GradedEpisode } from '../model/episode.js';
import type { RunPlan } from './plan.js';

/** How the run's episodes ended: how many ran, how many completed, and the failures' messages by count. */
export interface EpisodeEnds {
  episodes: number;
  completed: number;
  failures: Map<string, number>;
}

/** A run with episodes but no completed one: thrown after its report is written. */
export class NothingCompletedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NothingCompletedError';
  }
}

/** The sentence of a run whose episodes all failed to complete, with the most common end; null otherwise. */
export function nothingCompleted(ends: EpisodeEnds, plan: Pick<RunPlan, 'unsetPassEnv'>): string | null {
  if (ends.episodes === 0 || ends.completed > 0) return null;
  const [message, count] = [...ends.failures.entries()].sort(
    (a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1),
  )[0] ?? ['no result', ends.episodes];
  const unset = Object.entries(plan.unsetPassEnv)
    .map(([side, names]) => `${side}: ${names.join(', ')}`)
    .join('; ');
  const env = unset ? ` agent.pass_env names variables this environment does not set (${unset}).` : '';
  return `Could not run: none of the ${ends.episodes} episodes completed, so nothing was tested. The most common end (${count} of ${ends.episodes}): ${message}.${env}`;
}

/** Counts an episode's end: completed, or the message of its `completed` expectation. */
export function countEnd(ends: EpisodeEnds, graded: GradedEpisode): void {
  ends.episodes++;
  const completed = graded.results.find((r) => r.id === COMPLETED);
  if (completed?.verdict === 'pass') ends.completed++;
  else {
    // Durations differ from episode to episode; the end they describe is the same.
    const message = (completed?.message ?? 'not graded').replace(/\b\d+ ms\b/g, 'N ms');
    ends.failures.set(message, (ends.failures.get(message) ?? 0) + 1);
  }
}
