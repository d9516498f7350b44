// The baseline cache's files: what is stored, what is refused, and every unreadable entry a miss.
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Scenario } from '../../src/config/schema.js';
import type { GradedEpisode, Side } from '../../src/model/episode.js';
import { expandEpisodes } from '../../src/plan/expand.js';
import { seedFor } from '../../src/plan/pin.js';
import { ReportSchema } from '../../src/report/report-schema.js';
import {
  BaselineCache,
  type BaselineKeyParts,
  baselineKey,
  entryFile,
} from '../../src/run/baseline-cache.js';

const SUITE = 'a'.repeat(64);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sg-baseline-'));
  dirs.push(d);
  return d;
}

function parts(over: Partial<BaselineKeyParts> = {}): BaselineKeyParts {
  return {
    base_tree: 'b'.repeat(40),
    suite_hash: SUITE,
    template_hash: 'c'.repeat(64),
    seeds: 'd'.repeat(64),
    repeats: 2,
    engine: 'postgres',
    stategate: '0.1.0',
    config: 'stategate.yml',
    isolation: 'process',
    judge: null,
    shard: null,
    ...over,
  };
}

/** A graded episode as a run writes it (the fields every record has). */
function graded(scenario: string, side: Side, repeat: number, passed = true): GradedEpisode {
  return {
    record: {
      episode: `${scenario}.${side}.r${repeat}`,
      scenario,
      side,
      repeat,
      seed: seedFor(SUITE, scenario, repeat),
      calls: [],
      refused: [],
      agent: {
        exitCode: 0,
        signal: null,
        timedOut: false,
        durationMs: 12.5,
        stdout: '{"reply":"done"}\n',
        stderr: '',
        truncated: false,
        result: { reply: 'done', outcome: 'SUCCESS' },
      },
      diff: { tables: {}, fingerprints: { orders: 'e'.repeat(64) } },
      queries: {},
      timings: { agent: 12.5 },
      pin: { suite: SUITE, scenario: 'f'.repeat(64) },
    },
    results: [
      {
        id: 'completed',
        kind: 'completed',
        critical: true,
        verdict: passed ? 'pass' : 'fail',
        message: 'ok',
      },
    ],
    passed,
  };
}

const scenario = (id: string) => ({ id }) as Scenario;
const ids = ['alpha', 'beta'];

/** A spool of both cases with base repeats 1..n (and heads, which are never stored). */
function spoolOf(n: number, edit?: (g: GradedEpisode) => GradedEpisode) {
  const by: Record<string, Record<Side, GradedEpisode[]>> = {};
  for (const id of ids) {
    by[id] = { base: [], head: [] };
    for (let r = 1; r <= n; r++) {
      by[id].base.push(edit ? edit(graded(id, 'base', r)) : graded(id, 'base', r));
      by[id].head.push(graded(id, 'head', r, false));
    }
  }
  return (id: string) => by[id];
}

function store(
  cache: BaselineCache,
  n: number,
  opts: { interrupted?: boolean; edit?: (g: GradedEpisode) => GradedEpisode } = {},
) {
  return cache.store({
    scenarioIds: ids,
    episodesOf: spoolOf(n, opts.edit),
    minRepeats: 2,
    interrupted: opts.interrupted ?? false,
    startedAt: new Date('2026-12-01T10:02:33.000Z'),
  });
}

describe('the baseline cache', () => {
  it('stores a complete base and gives each planned base episode back once, by repeat and seed', () => {
    const dir = tempDir();
    const warnings: string[] = [];
    expect(
      store(
        BaselineCache.open(dir, parts(), (w) => warnings.push(w)),
        2,
      ),
    ).toEqual({
      stored: 4,
      written: {
        file: entryFile(dir, baselineKey(parts())),
        sha256: createHash('sha256')
          .update(readFileSync(entryFile(dir, baselineKey(parts()))))
          .digest('hex'),
      },
    });
    const again = BaselineCache.open(dir, parts(), (w) => warnings.push(w));
    expect(warnings).toEqual([]);
    expect(again.size).toBe(4);
    expect(again.entryStoredAt).toBe('2026-12-01T10:02:33.000Z');
    const planned = expandEpisodes(ids.map(scenario), ['base', 'head'], 3, SUITE);
    const taken = planned.map((p) => (again.take(p) ? p.id : null)).filter(Boolean);
    // Repeat 3 and every head episode are missing: only those run.
    expect(taken.sort()).toEqual(['alpha.base.r1', 'alpha.base.r2', 'beta.base.r1', 'beta.base.r2']);
    expect(again.facts()).toEqual({
      key: baselineKey(parts()),
      hit: true,
      reused_episodes: 4,
      stored_at: '2026-12-01T10:02:33.000Z',
      saved: false,
    });
    // The run topped up repeat 3: the entry now holds it too, stored at this run.
    expect(store(again, 3)).toMatchObject({ stored: 6 });
    expect(BaselineCache.open(dir, parts(), () => undefined).covers(ids, 3)).toBe(true);
    expect(ReportSchema.shape.baseline_cache.safeParse(again.facts()).success).toBe(true);
  });

  it('writes nothing when every base episode came from the entry', () => {
    const dir = tempDir();
    store(
      BaselineCache.open(dir, parts(), () => undefined),
      2,
    );
    const before = readFileSync(entryFile(dir, baselineKey(parts())), 'utf8');
    const again = BaselineCache.open(dir, parts(), () => undefined);
    for (const p of expandEpisodes(ids.map(scenario), ['base'], 2, SUITE)) again.take(p);
    expect(store(again, 2)).toEqual({ stored: 0, written: null });
    expect(readFileSync(entryFile(dir, baselineKey(parts())), 'utf8')).toBe(before);
  });

  it('stores nothing from an interrupted run, a harness error, or an incomplete base', () => {
    const dir = tempDir();
    const open = () => BaselineCache.open(dir, parts(), () => undefined);
    expect(store(open(), 2, { interrupted: true })).toEqual({ reason: 'the run was interrupted' });
    const errored = store(open(), 2, {
      edit: (g) =>
        g.record.repeat === 2 && g.record.scenario === 'beta'
          ? { ...g, record: { ...g.record, infraError: { stage: 'tool', message: 'relation missing' } } }
          : g,
    });
    expect(errored).toEqual({ reason: 'base episode beta.base.r2 had a harness error (tool)' });
    // One repeat where two are the floor.
    expect(store(open(), 1)).toEqual({ reason: 'case alpha has 1 base episode(s), not repeats 1..2' });
    // A gap: repeats 1 and 3.
    const gap = store(open(), 3, {
      edit: (g) => (g.record.repeat === 2 ? { ...g, record: { ...g.record, repeat: 3 } } : g),
    });
    expect('reason' in gap).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
    const refused = open();
    store(refused, 2, { interrupted: true });
    expect(refused.facts()).toMatchObject({
      hit: false,
      saved: false,
      note: 'not stored: the run was interrupted',
    });
  });

  it('is a miss under another key: base tree, suite, seeds, repeats, engine, version', () => {
    const dir = tempDir();
    store(
      BaselineCache.open(dir, parts(), () => undefined),
      2,
    );
    for (const changed of [
      { base_tree: '1'.repeat(40) },
      { suite_hash: '2'.repeat(64) },
      { seeds: '3'.repeat(64) },
      { repeats: 3 },
      { repeats: { min: 2, max: 6 } },
      { engine: 'embedded' },
      { stategate: '0.2.0' },
      { isolation: 'container' },
    ]) {
      const other = BaselineCache.open(dir, parts(changed), () => undefined);
      expect(other.size, JSON.stringify(changed)).toBe(0);
    }
  });

  it('treats an unreadable entry as a miss and says why, never failing', () => {
    const dir = tempDir();
    const file = entryFile(dir, baselineKey(parts()));
    const attempt = (text: string) => {
      writeFileSync(file, text);
      const warnings: string[] = [];
      const cache = BaselineCache.open(dir, parts(), (w) => warnings.push(w));
      expect(cache.size).toBe(0);
      expect(cache.facts().hit).toBe(false);
      expect(warnings).toHaveLength(1);
      return warnings[0];
    };
    store(
      BaselineCache.open(dir, parts(), () => undefined),
      2,
    );
    const good = JSON.parse(readFileSync(file, 'utf8'));
    const edited = (edit: (e: typeof good) => void) => {
      const e = structuredClone(good);
      edit(e);
      return JSON.stringify(e);
    };

    expect(attempt(readFileSync(file, 'utf8').slice(0, 200))).toContain('not JSON');
    expect(attempt(edited((e) => (e.version = 2)))).toContain('format version 2, this stategate reads 1');
    expect(attempt(edited((e) => (e.episodes.alpha[0].record.calls = 'none')))).toContain(
      'episodes.alpha[0].record.calls',
    );
    expect(attempt(edited((e) => (e.episodes.alpha[0].surprise = true)))).toContain(
      'not a baseline cache entry',
    );
    // Parses, but does not fit its key: another key, a seed not the repeat's, a head episode, a harness error.
    expect(attempt(edited((e) => (e.key = '9'.repeat(64))))).toContain('stored under key 999999999999');
    expect(attempt(edited((e) => (e.episodes.alpha[1].record.seed += 1)))).toContain("is not this repeat's");
    expect(attempt(edited((e) => (e.episodes.beta[0].record.side = 'head')))).toContain('a head episode');
    expect(
      attempt(edited((e) => (e.episodes.beta[0].record.infraError = { stage: 'sandbox', message: 'x' }))),
    ).toContain('a harness error');
    expect(attempt(edited((e) => (e.episodes.beta[1].record.pin.suite = '0'.repeat(64))))).toContain(
      'another pinned suite',
    );
    expect(attempt(edited((e) => e.episodes.beta.push(e.episodes.beta[0])))).toContain('twice');
    // A corrupt entry is replaced by the next complete run.
    const cache = BaselineCache.open(dir, parts(), () => undefined);
    expect(store(cache, 2)).toMatchObject({ stored: 4 });
    expect(BaselineCache.open(dir, parts(), () => undefined).size).toBe(4);
  });
});
