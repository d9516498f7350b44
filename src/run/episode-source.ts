// Where a graded episode comes from. The run's loop asks its sources in order and takes the first
// answer: the baseline cache (base episodes of an earlier run on the same base tree), the in-run
// cache (the same checkout on the same pinned suite and seed ran earlier in this process), and a
// fresh episode, which always answers. Whatever the source, the record is graded here, by this run.

import type { Tool } from '../config/schema.js';
import type { UserPlayers } from '../conversation/players.js';
import type { Gateway } from '../gateway/types.js';
import { gradeEpisode, regradeEpisode } from '../grade/index.js';
import type { JudgeClientOptions } from '../judge/client.js';
import { judgeEpisode } from '../judge/episode.js';
import type { EpisodeRecord, GradedEpisode } from '../model/episode.js';
import type { PlannedEpisode } from '../plan/expand.js';
import type { PinnedSuite } from '../plan/pin.js';
import type { Template } from '../sandbox/types.js';
import type { BaselineCache } from './baseline-cache.js';
import type { Checkout } from './checkout.js';
import { runEpisode } from './episode.js';
import type { EpisodeSignals } from './episode-signals.js';
import type { RunModels } from './run-models.js';
import type { SideRuntime } from './side.js';

export interface EpisodeSource {
  /** The graded episode, or null when this source has none for it. */
  take(planned: PlannedEpisode): Promise<GradedEpisode | null>;
}

/** Asks each source in turn; the last must always answer. */
export function firstOf(sources: EpisodeSource[]): (planned: PlannedEpisode) => Promise<GradedEpisode> {
  return async (planned) => {
    for (const source of sources) {
      const graded = await source.take(planned);
      if (graded) return graded;
    }
    throw new Error(`${planned.id}: no source ran this episode`);
  };
}

/**
 * Base episodes from the baseline cache: each record is graded again here (only the judge's
 * verdicts are taken as stored), so a cache entry can hold evidence but never a verdict.
 */
export function baselineSource(baseline: BaselineCache, tools: Map<string, Tool>): EpisodeSource {
  return {
    take: async (p) => {
      const cached = baseline.take(p);
      return cached ? regradeEpisode(p.scenario, cached, tools) : null;
    },
  };
}

/** Judges (when the scenario has judge expectations) and grades a record. */
export type Grader = (planned: PlannedEpisode, record: EpisodeRecord) => Promise<GradedEpisode>;

export function grader(tools: Map<string, Tool>, judge: JudgeClientOptions | null): Grader {
  return async (p, record) => {
    const judged = await judgeEpisode(p.scenario, record, judge);
    return gradeEpisode(p.scenario, record, tools, judged.results);
  };
}

/** The key of an episode in the in-run cache: checkout, pinned suite, scenario, repeat and seed. */
export function inRunKey(checkout: Checkout, pin: PinnedSuite, p: PlannedEpisode): string {
  return [checkout.dir, checkout.sha ?? '', pin.suiteHash, p.scenario.id, p.repeat, p.seed].join('\0');
}

/**
 * Records of earlier runs in this process (the demo compares three versions pairwise): the same
 * checkout on the same pinned suite and seed is not run again, and its record is reused under this
 * side's name.
 */
export function inRunSource(
  cache: Map<string, EpisodeRecord>,
  keyOf: (p: PlannedEpisode) => string,
  grade: Grader,
): EpisodeSource {
  return {
    take: async (p) => {
      const cached = cache.get(keyOf(p));
      return cached ? grade(p, { ...cached, episode: p.id, side: p.side }) : null;
    },
  };
}

export interface FreshContext {
  template: Template;
  gateway: Gateway;
  tools: Map<string, Tool>;
  runtimes: Partial<Record<PlannedEpisode['side'], SideRuntime>>;
  expose: boolean;
  pin: PinnedSuite;
  /** The run's model routes and spend, when the suite declares `models`. */
  models?: RunModels;
  signals: EpisodeSignals;
  grade: Grader;
  /** Where a completed record is kept for later runs in this process, under `keyOf`. */
  cache?: { records: Map<string, EpisodeRecord>; keyOf: (p: PlannedEpisode) => string };
  /** Told before an episode that could not be graded runs again. */
  onRetry?: (planned: PlannedEpisode, attempt: number, why: string) => void;
  /** The run's model-played user, shared by both sides so that its turns are pinned. */
  players?: UserPlayers;
}

/** How many times an episode that failed outside the agent runs again, with the same seed. */
export const INFRA_RETRIES = 2;

/**
 * Whether a record failed for a reason outside the agent that another attempt may not meet: not an
 * interrupt (the run is stopping), not SQL errors the agent's own calls provoked (its doing), and
 * not a state.sql that ran past the timeout (it would again).
 */
function retryable(record: EpisodeRecord, signal: AbortSignal): boolean {
  const infra = record.infraError;
  return (
    infra !== undefined &&
    infra.stage !== 'interrupted' &&
    infra.stage !== 'budget' &&
    !infra.provoked &&
    !infra.timedOut &&
    !signal.aborted
  );
}

/** Runs the episode: a database, a gateway session and the side's agent. Always answers. */
export function freshSource(ctx: FreshContext): EpisodeSource {
  return {
    take: async (p) => {
      const runtime = ctx.runtimes[p.side];
      if (!runtime)
        throw new Error(
          `${p.id}: the ${p.side} side was not prepared (its episodes were expected from the cache)`,
        );
      let record = await runOnce(ctx, runtime, p);
      for (let attempt = 1; attempt <= INFRA_RETRIES && retryable(record, ctx.signals.run); attempt++) {
        ctx.onRetry?.(p, attempt, `${record.infraError!.stage}: ${record.infraError!.message}`);
        record = await runOnce(ctx, runtime, p);
      }
      if (!record.infraError) ctx.cache?.records.set(ctx.cache.keyOf(p), record);
      return ctx.grade(p, record);
    },
  };
}

/** One attempt at an episode, on a signal of its own. */
async function runOnce(ctx: FreshContext, runtime: SideRuntime, p: PlannedEpisode): Promise<EpisodeRecord> {
  // Episodes listen on signals of their own, so the run's carries one listener however many run at once.
  const episodeSignal = ctx.signals.open();
  try {
    return await runEpisode(
      {
        template: ctx.template,
        gateway: ctx.gateway,
        tools: ctx.tools,
        side: runtime,
        expose: ctx.expose,
        signal: episodeSignal.signal,
        pin: ctx.pin,
        models: ctx.models,
        players: ctx.players,
      },
      p,
    );
  } finally {
    episodeSignal.release();
  }
}
