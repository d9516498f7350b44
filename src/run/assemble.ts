// From the graded episodes of a run to report.json: the facts of the run plus the compared cases.
import type { Scenario } from '../config/schema.js';
import type { Suite } from '../config/suite.js';
import type { GradedEpisode, Side } from '../model/episode.js';
import type { Report } from '../model/report.js';
import type { PinnedSuite } from '../plan/pin.js';
import { buildReport } from '../report/build.js';
import type { Engine } from '../sandbox/types.js';
import { type Checkout, sameFiles } from './checkout.js';
import { verifyPinned } from './verify-pin.js';

export interface AssembleInput {
  scenarios: Scenario[];
  graded: Map<string, Record<Side, GradedEpisode[]>>;
  suite: Suite;
  pin: PinnedSuite;
  engine: Pick<Engine, 'name' | 'reason'>;
  checkouts: Partial<Record<Side, Checkout>>;
  repeats: number;
  seeds: Record<string, number[]>;
  shard: { index: number; total: number } | null;
  interrupted: boolean;
  startedAt: Date;
  /** Head alone: no base side at all (the first run on a new repository). */
  headOnly: boolean;
  episodesFile?: string;
}

/** Builds report.json; a case whose episodes never ran (interrupted) has empty sides: incomplete. */
export function assembleReport(input: AssembleInput): Report {
  verifyPinned(input.pin, input.graded);
  const side = (s: Side) => {
    const c = input.checkouts[s];
    if (!c) return null;
    return c.dirty ? { ref: c.ref, sha: c.sha, dirty: true as const } : { ref: c.ref, sha: c.sha };
  };
  const report = buildReport({
    cases: input.scenarios.map((scenario) => {
      const g = input.graded.get(scenario.id)!;
      return { scenario, base: input.headOnly ? null : g.base, head: g.head };
    }),
    pin: {
      suite_hash: input.pin.suiteHash,
      template_hash: input.pin.templateHash,
      scenarios: input.pin.scenarios,
    },
    sides: { base: side('base'), head: side('head') },
    engine: input.engine.name,
    engineReason: input.engine.reason,
    gate: input.suite.config.gate,
    repeats: input.repeats,
    seeds: input.seeds,
    shard: input.shard,
    interrupted: input.interrupted,
    startedAt: input.startedAt.toISOString(),
    durationMs: Date.now() - input.startedAt.getTime(),
    episodesFile: input.episodesFile ?? 'episodes.jsonl',
  });
  if (!input.headOnly && sameFiles(input.checkouts.base, input.checkouts.head)) report.identical_sides = true;
  return report;
}
