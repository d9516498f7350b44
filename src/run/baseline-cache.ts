// The baseline cache (`compare --cache DIR`, the action's `cache` input): the base's graded episodes
// kept between runs, so a pull request's next push runs only the head. An entry is reused only when
// its key matches exactly (base tree, pinned suite, seeds, repeats, engine, stategate version), every
// episode in it checks out against that key, and it is stored only from a run whose base is complete.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson } from '../model/canonical-json.js';
import { sha256 } from '../model/content-hash.js';
import type { GradedEpisode, Side } from '../model/episode.js';
import type { BaselineCacheFacts } from '../model/report.js';
import type { PlannedEpisode } from '../plan/expand.js';
import { seedFor } from '../plan/pin.js';
import { jsonPath } from '../report/report-schema.js';
import type { BaselineStored } from './api.js';
import {
  BASELINE_FORMAT,
  BASELINE_FORMAT_VERSION,
  type BaselineEntry,
  BaselineEntrySchema,
} from './baseline-schema.js';

/** Everything a base episode's outcome may depend on besides the agent's own chance. */
export interface BaselineKeyParts {
  /** The git tree of the base checkout: its files, not the commit that names them. */
  base_tree: string;
  suite_hash: string;
  template_hash: string;
  /** A hash of the seeds of the first look of every case (the seed scheme, not only the suite). */
  seeds: string;
  /** A fixed number of repeats, or the adaptive policy. */
  repeats: number | { min: number; max: number };
  engine: string;
  stategate: string;
  /** The stategate.yml the base's agent was read from, relative to its checkout. */
  config: string;
  /** How the base's agent ran: process or container. */
  isolation: string;
  /** sha256 of the judge section (model, criteria settings); null without one. */
  judge: string | null;
  shard: { index: number; total: number } | null;
}

/** The key of an entry: a hash of its parts in canonical form. */
export function baselineKey(parts: BaselineKeyParts): string {
  return sha256(canonicalJson(parts));
}

/** The hash that stands for the seeds of repeats 1..`repeats` of every case. */
export function seedsHash(suiteHash: string, scenarioIds: readonly string[], repeats: number): string {
  const seeds = [...scenarioIds]
    .sort()
    .map((id) => [id, Array.from({ length: repeats }, (_, i) => seedFor(suiteHash, id, i + 1))]);
  return sha256(canonicalJson(seeds));
}

/** The file of one entry in the cache directory. */
export function entryFile(dir: string, key: string): string {
  return join(dir, `base-${key}.json`);
}

/** A cache directory opened for one key: what it holds for that key, and what this run took from it. */
export class BaselineCache {
  private readonly cached = new Map<string, Map<number, GradedEpisode>>();
  private reused = 0;
  private readonly storedAt: string | null;
  private note: string | undefined;
  private saved = false;

  private constructor(
    readonly dir: string,
    readonly key: string,
    readonly parts: BaselineKeyParts,
    entry: BaselineEntry | null,
  ) {
    this.storedAt = entry?.stored_at ?? null;
    for (const [id, episodes] of Object.entries(entry?.episodes ?? {})) {
      this.cached.set(id, new Map(episodes.map((g) => [g.record.repeat, g as GradedEpisode])));
    }
  }

  /**
   * Reads the entry of `parts` from `dir`. An entry that is missing, unreadable, of another format
   * version, or inconsistent with its key is a miss: `warn` is told why, and the run goes on.
   */
  static open(dir: string, parts: BaselineKeyParts, warn: (message: string) => void): BaselineCache {
    const key = baselineKey(parts);
    const file = entryFile(dir, key);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        warn(`baseline cache: cannot read ${file} (${(err as Error).message}): a miss`);
      return new BaselineCache(dir, key, parts, null);
    }
    const problem = (why: string) => {
      warn(`baseline cache: ${file}: ${why}: a miss, the base runs`);
      const cache = new BaselineCache(dir, key, parts, null);
      cache.note = `the cache entry could not be used (${why})`;
      return cache;
    };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      return problem(`not JSON (${(err as Error).message})`);
    }
    const format = json as { format?: unknown; version?: unknown } | null;
    if (format?.format === BASELINE_FORMAT && format.version !== BASELINE_FORMAT_VERSION)
      return problem(
        `format version ${JSON.stringify(format.version)}, this stategate reads ${BASELINE_FORMAT_VERSION}`,
      );
    const parsed = BaselineEntrySchema.safeParse(json);
    if (!parsed.success)
      return problem(
        `not a baseline cache entry: ${parsed.error.issues
          .slice(0, 3)
          .map((i) => `${jsonPath(i.path)}: ${i.message}`)
          .join('; ')}`,
      );
    const inconsistent = entryProblem(parsed.data, key, parts.suite_hash);
    if (inconsistent) return problem(inconsistent);
    return new BaselineCache(dir, key, parts, parsed.data);
  }

  /** The entry's file in the cache directory. */
  get file(): string {
    return entryFile(this.dir, this.key);
  }

  /** How many base episodes the entry holds. */
  get size(): number {
    let n = 0;
    for (const byRepeat of this.cached.values()) n += byRepeat.size;
    return n;
  }

  /** When the entry read was stored (the start of the run that stored it); null on a miss. */
  get entryStoredAt(): string | null {
    return this.storedAt;
  }

  /**
   * Per scenario, what its cached base episodes spent on models as the gateway recorded it: the mean
   * per episode, or null when a call has no cost (a model without prices). An episode with no model
   * calls recorded spent nothing.
   */
  measuredCosts(): Map<string, { episodes: number; usdPerEpisode: number | null }> {
    const costs = new Map<string, { episodes: number; usdPerEpisode: number | null }>();
    for (const [id, byRepeat] of this.cached) {
      let total: number | null = 0;
      for (const g of byRepeat.values())
        for (const call of g.record.modelCalls ?? [])
          total = total === null || call.costUsd === null ? null : total + call.costUsd;
      const episodes = byRepeat.size;
      if (episodes > 0) costs.set(id, { episodes, usdPerEpisode: total === null ? null : total / episodes });
    }
    return costs;
  }

  /** The cached graded episode for a planned base episode, counted as reused; undefined when there is none. */
  take(p: PlannedEpisode): GradedEpisode | undefined {
    if (p.side !== 'base') return undefined;
    const g = this.cached.get(p.scenario.id)?.get(p.repeat);
    if (!g || g.record.seed !== p.seed) return undefined;
    this.reused++;
    return g;
  }

  /** Whether the entry holds repeats 1..`repeats` of every case: then the base need not even start. */
  covers(scenarioIds: readonly string[], repeats: number): boolean {
    return scenarioIds.every((id) => {
      const byRepeat = this.cached.get(id);
      for (let r = 1; r <= repeats; r++) if (!byRepeat?.has(r)) return false;
      return true;
    });
  }

  /**
   * Stores the run's base episodes under the key, when the run may be stored: not interrupted, and
   * every case's base episodes complete (repeats 1..n, n >= `minRepeats`) with no harness error.
   * Returns why not otherwise. Nothing is written when every base episode came from the entry.
   */
  store(input: {
    scenarioIds: readonly string[];
    episodesOf: (id: string) => Record<Side, GradedEpisode[]>;
    minRepeats: number;
    interrupted: boolean;
    startedAt: Date;
  }): { stored: number; written: BaselineStored | null } | { reason: string } {
    const refuse = (reason: string) => {
      this.note = `not stored: ${reason}`;
      return { reason };
    };
    if (input.interrupted) return refuse('the run was interrupted');
    const episodes: Record<string, GradedEpisode[]> = {};
    let total = 0;
    for (const id of input.scenarioIds) {
      const base = [...input.episodesOf(id).base].sort((a, b) => a.record.repeat - b.record.repeat);
      const errored = base.find((g) => g.record.infraError);
      if (errored)
        return refuse(
          `base episode ${errored.record.episode} had a harness error (${errored.record.infraError!.stage})`,
        );
      const complete = base.length >= input.minRepeats && base.every((g, i) => g.record.repeat === i + 1);
      if (!complete)
        return refuse(`case ${id} has ${base.length} base episode(s), not repeats 1..${input.minRepeats}`);
      episodes[id] = base;
      total += base.length;
    }
    if (total === this.reused) return { stored: 0, written: null };
    const entry: BaselineEntry = {
      format: BASELINE_FORMAT,
      version: BASELINE_FORMAT_VERSION,
      key: this.key,
      parts: { ...this.parts },
      stored_at: input.startedAt.toISOString(),
      episodes,
    };
    mkdirSync(this.dir, { recursive: true });
    const file = entryFile(this.dir, this.key);
    // Written aside and renamed: a reader never sees half an entry.
    const partial = `${file}.${process.pid}.partial`;
    const text = JSON.stringify(entry);
    try {
      writeFileSync(partial, text);
      renameSync(partial, file);
    } catch (err) {
      rmSync(partial, { force: true });
      return refuse(`cannot write ${file}: ${(err as Error).message}`);
    }
    this.saved = true;
    this.note = undefined;
    return { stored: total, written: { file, sha256: sha256(text) } };
  }

  /** What report.json says about the cache in this run. */
  facts(): BaselineCacheFacts {
    return {
      key: this.key,
      hit: this.reused > 0,
      reused_episodes: this.reused,
      stored_at: this.reused > 0 ? this.storedAt : null,
      saved: this.saved,
      ...(this.note ? { note: this.note } : {}),
    };
  }
}

/** Why an entry that parsed cannot be trusted for `key`, or null when every episode fits it. */
function entryProblem(entry: BaselineEntry, key: string, suiteHash: string): string | null {
  if (entry.key !== key) return `stored under key ${entry.key.slice(0, 12)}, read for ${key.slice(0, 12)}`;
  for (const [id, episodes] of Object.entries(entry.episodes)) {
    const repeats = new Set<number>();
    for (const { record } of episodes) {
      const where = `episodes.${id} repeat ${record.repeat}`;
      if (record.side !== 'base') return `${where}: a ${record.side} episode`;
      if (record.scenario !== id) return `${where}: ran scenario ${record.scenario}`;
      if (record.pin?.suite !== suiteHash) return `${where}: ran another pinned suite`;
      if (record.seed !== seedFor(suiteHash, id, record.repeat))
        return `${where}: seed ${record.seed} is not this repeat's`;
      if (record.infraError) return `${where}: a harness error`;
      if (repeats.has(record.repeat)) return `${where}: twice`;
      repeats.add(record.repeat);
    }
  }
  return null;
}
