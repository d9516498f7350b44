// Expands scenarios x repeats x sides into the episodes of a run, and slices it into shards.
import { createHash } from 'node:crypto';
import type { Shard } from '../config/options.js';
import type { Scenario } from '../config/schema.js';
import type { Side } from '../model/episode.js';
import { seedFor } from './pin.js';

export interface PlannedEpisode {
  /** Unique in the run: `<scenario>.<side>.r<repeat>`. */
  id: string;
  scenario: Scenario;
  side: Side;
  /** 1-based. */
  repeat: number;
  seed: number;
}

export type { Shard };

/** Which shard a scenario belongs to: by a hash of its id, so slices are stable as the suite grows. */
export function shardOf(scenarioId: string, total: number): number {
  const h = createHash('sha256').update(scenarioId).digest();
  return (h.readUInt32BE(0) % total) + 1;
}

/** The scenarios of one shard (all of them without a shard). */
export function sliceScenarios(scenarios: Scenario[], shard: Shard | null | undefined): Scenario[] {
  if (!shard || shard.total === 1) return scenarios;
  return scenarios.filter((s) => shardOf(s.id, shard.total) === shard.index);
}

/**
 * Every episode of a run, interleaved: repeat-major, and within a repeat each scenario's base and
 * head episodes side by side (alternating which goes first), so machine drift hits both alike.
 */
export function expandEpisodes(
  scenarios: Scenario[],
  sides: Side[],
  repeats: number,
  suiteHash: string,
  firstRepeat = 1,
): PlannedEpisode[] {
  const out: PlannedEpisode[] = [];
  for (let repeat = firstRepeat; repeat < firstRepeat + repeats; repeat++) {
    scenarios.forEach((scenario, i) => {
      const seed = seedFor(suiteHash, scenario.id, repeat);
      const order = (i + repeat) % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        out.push({ id: `${scenario.id}.${side}.r${repeat}`, scenario, side, repeat, seed });
      }
    });
  }
  return out;
}
