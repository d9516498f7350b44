// `stategate plan`: the episodes a compare (or a run) would take, exact for fixed repeats and min/max
// for adaptive ones, and the model spend measured from a baseline cache entry written by the cache's
// own writer for the same key a compare would read; without one the spend is unknown, never guessed.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GradedEpisode, ModelCallRecord } from '../../src/model/episode.js';
import { seedFor } from '../../src/plan/pin.js';
import { BaselineCache } from '../../src/run/baseline-cache.js';
import { decideSuite } from '../../src/run/plan.js';
import { ResourceScope } from '../../src/run/scope.js';
import { commitTagged, git, initRepo } from '../helpers/demo-repo.js';
import { writeModelSuite } from '../helpers/model-suite.js';
import { stategate } from '../helpers/stategate-cli.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A git repository with the model suite (3 scenarios) tagged `base`, then a changed agent tagged `head`. */
function suiteRepo(opts: { repeats?: number; budget?: { run_usd: number } } = {}): string {
  const dir = writeModelSuite({
    agent: 'python',
    providerUrl: 'http://127.0.0.1:9/v1',
    keyEnv: 'PLAN_TEST_KEY',
    scenarios: 3,
    repeats: opts.repeats,
    budget: opts.budget,
  });
  dirs.push(dir);
  if (opts.repeats === undefined) {
    const file = join(dir, 'stategate.yml');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^repeats: \d+\n/m, ''));
  }
  initRepo((...args) => git(dir, ...args));
  commitTagged((...args) => git(dir, ...args), 'base');
  writeFileSync(join(dir, 'agent.py'), `${readFileSync(join(dir, 'agent.py'), 'utf8')}\n# head\n`);
  commitTagged((...args) => git(dir, ...args), 'head');
  return dir;
}

function planJson(cwd: string, args: string[]) {
  const res = stategate(cwd, ['plan', ...args, '--json']);
  expect(res.stderr).toBe('');
  expect(res.code).toBe(0);
  return JSON.parse(res.stdout);
}

describe('stategate plan: episodes', () => {
  it('counts fixed repeats exactly, per side and for a run of one side', () => {
    const repo = suiteRepo({ repeats: 4 });
    const compare = planJson(repo, ['--base', 'base', '--head', 'head']);
    expect(compare.sides).toEqual(['base', 'head']);
    expect(compare.scenarios).toBe(3);
    expect(compare.repeats).toEqual({ min: 4, max: 4, adaptive: false, never_failing: 4 });
    expect(compare.episodes).toEqual({
      per_side: { min: 12, max: 12, never_failing: 12 },
      total: { min: 24, max: 24, never_failing: 24 },
    });
    const run = planJson(repo, ['--dir', '.', '--repeats', '5', '--scenario', 'refund-with-model-2']);
    expect(run.sides).toEqual(['head']);
    expect(run.scenarios).toBe(1);
    expect(run.episodes.total).toEqual({ min: 5, max: 5, never_failing: 5 });
  });

  it('gives adaptive repeats as min and max, and a never-failing case at the first look', () => {
    const repo = suiteRepo();
    const plan = planJson(repo, ['--base', 'base', '--head', 'head']);
    // The default policy: 7 to 32 per side; a case whose head never fails is decided at min.
    expect(plan.repeats).toEqual({ min: 7, max: 32, adaptive: true, never_failing: 7 });
    expect(plan.episodes.per_side).toEqual({ min: 21, max: 96, never_failing: 21 });
    expect(plan.episodes.total).toEqual({ min: 42, max: 192, never_failing: 42 });
    const text = stategate(repo, ['plan', '--base', 'base', '--head', 'head']);
    expect(text.stdout).toContain(
      '3 scenarios x 7 to 32 repeats (adaptive) on base and head: 21 to 96 episodes per side, 42 to 192 in all.',
    );
  });
});

/** A recorded model call costing `usd` (null: a model without prices). */
function call(seq: number, usd: number | null): ModelCallRecord {
  return {
    seq,
    provider: 'openai',
    path: '/v1/chat/completions',
    model: 'gpt-4.1-mini',
    stream: false,
    status: 200,
    startedAt: '2026-12-01T10:00:00.000Z',
    latencyMs: 3,
    usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 5 },
    costUsd: usd,
  };
}

function baseEpisode(
  suiteHash: string,
  scenario: string,
  repeat: number,
  costs: (number | null)[],
): GradedEpisode {
  return {
    record: {
      episode: `${scenario}.base.r${repeat}`,
      scenario,
      side: 'base',
      repeat,
      seed: seedFor(suiteHash, scenario, repeat),
      calls: [],
      refused: [],
      agent: {
        exitCode: 0,
        signal: null,
        timedOut: false,
        durationMs: 10,
        stdout: '{"reply":"done"}\n',
        stderr: '',
        truncated: false,
        result: { reply: 'done', outcome: 'SUCCESS' },
      },
      diff: { tables: {}, fingerprints: {} },
      queries: {},
      timings: { agent: 10 },
      pin: { suite: suiteHash, scenario: 'f'.repeat(64) },
      modelCalls: costs.map((c, i) => call(i + 1, c)),
    },
    results: [{ id: 'refunded', kind: 'query', critical: true, verdict: 'pass', message: 'ok' }],
    passed: true,
  } as GradedEpisode;
}

/**
 * Stores base episodes under the key a compare of base..head would read, through the cache's writer.
 * `costs[id]` lists each repeat's call costs.
 */
async function storeBase(repo: string, cacheDir: string, costs: Record<string, (number | null)[][]>) {
  const scope = new ResourceScope();
  try {
    const decided = await decideSuite({ base: 'base', head: 'head', repo }, [], scope, () => undefined);
    const tree = decided.checkouts.base?.tree;
    if (!tree || !decided.baselineKey) throw new Error('no base tree');
    const suiteHash = decided.pin.suiteHash;
    const cache = BaselineCache.open(
      cacheDir,
      { base_tree: tree, ...decided.baselineKey, engine: 'postgres' },
      (m) => {
        throw new Error(m);
      },
    );
    const ids = decided.scenarios.map((s) => s.id);
    const result = cache.store({
      scenarioIds: ids,
      episodesOf: (id) => ({
        base: (costs[id] ?? []).map((c, i) => baseEpisode(suiteHash, id, i + 1, c)),
        head: [],
      }),
      minRepeats: decided.repeats.min,
      interrupted: false,
      startedAt: new Date('2026-12-01T10:02:33.000Z'),
    });
    expect(result).toHaveProperty('stored');
  } finally {
    await scope.close();
  }
}

describe('stategate plan: spend', () => {
  let repo: string;
  let cacheDir: string;
  beforeAll(async () => {
    repo = suiteRepo({ repeats: 2, budget: { run_usd: 1 } });
    cacheDir = mkdtempSync(join(tmpdir(), 'sg-plan-cache-'));
    dirs.push(cacheDir);
    // Means per episode: 0.02, 0.05 and 0.035 (an episode without calls spent nothing).
    await storeBase(repo, cacheDir, {
      'refund-with-model': [[0.01], [0.02, 0.01]],
      'refund-with-model-2': [[0.05], [0.03, 0.02]],
      'refund-with-model-3': [[0.07], []],
    });
  }, 60_000);

  it('uses the cache entry a compare would reuse, and says when it was stored', () => {
    const plan = planJson(repo, ['--base', 'base', '--head', 'head', '--cache', cacheDir]);
    expect(plan.source).toMatchObject({
      kind: 'baseline-cache',
      stored_at: '2026-12-01T10:02:33.000Z',
      engine: 'postgres',
    });
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect([...plan.per_scenario].sort(byId)).toEqual([
      { id: 'refund-with-model', usd_per_episode: 0.02, measured_episodes: 2 },
      { id: 'refund-with-model-2', usd_per_episode: 0.05, measured_episodes: 2 },
      { id: 'refund-with-model-3', usd_per_episode: 0.035, measured_episodes: 2 },
    ]);
    // (0.02 + 0.05 + 0.035) x 2 repeats x 2 sides.
    expect(plan.cost_usd).toEqual({ min: 0.42, max: 0.42, never_failing: 0.42 });
    expect(plan.usd_per_episode).toBe(0.035);
    // $1 / $0.035 = 28.57.
    expect(plan.budget).toEqual({ run_usd: 1, episodes_fit: 28 });
    const text = stategate(repo, ['plan', '--base', 'base', '--head', 'head', '--cache', cacheDir]).stdout;
    expect(text).toContain('measured from the baseline cache (stored 2026-12-01T10:02:33.000Z');
    expect(text).toContain('at most 28 episodes fit the budget at the measured cost');
  });

  it('is unknown without a cache, with a cache that has no entry for this key, or with an unpriced call', async () => {
    const none = planJson(repo, ['--base', 'base', '--head', 'head']);
    expect(none.source).toEqual({ kind: 'none' });
    expect(none.cost_usd).toEqual({ min: null, max: null, never_failing: null });
    expect(none.budget).toEqual({ run_usd: 1, episodes_fit: null });
    // Another repeats count is another key: the entry is not this plan's.
    const other = planJson(repo, ['--base', 'base', '--head', 'head', '--cache', cacheDir, '--repeats', '3']);
    expect(other.source).toEqual({ kind: 'none' });
    expect(other.usd_per_episode).toBeNull();
    const text = stategate(repo, ['plan', '--base', 'base', '--head', 'head']).stdout;
    expect(text).toContain('Model spend: unknown');
    expect(text).not.toContain('Estimated spend');

    const unpriced = mkdtempSync(join(tmpdir(), 'sg-plan-cache-'));
    dirs.push(unpriced);
    await storeBase(repo, unpriced, {
      'refund-with-model': [[0.01], [0.01]],
      'refund-with-model-2': [[null], [0.01]],
      'refund-with-model-3': [[0.01], [0.01]],
    });
    const partly = planJson(repo, ['--base', 'base', '--head', 'head', '--cache', unpriced]);
    expect(partly.source.kind).toBe('baseline-cache');
    expect(partly.per_scenario.find((s: { id: string }) => s.id === 'refund-with-model-2')).toEqual({
      id: 'refund-with-model-2',
      usd_per_episode: null,
      measured_episodes: 2,
    });
    expect(partly.cost_usd.min).toBeNull();
  }, 60_000);
});

describe('stategate plan: options', () => {
  it.each([
    [['plan', '--out', 'x'], '--out means nothing to plan: it runs no episode and writes no report'],
    [
      ['plan', '--fail-on', 'warn'],
      '--fail-on means nothing to plan: it runs no episode and writes no report',
    ],
    [['plan', '--base', 'a'], 'plan --base needs --head: it estimates a compare of the two'],
    [
      ['plan', '--head', 'a', '--dir', 'b'],
      'plan takes --head (with --base, a compare) or --dir (a run), not both',
    ],
    [
      ['plan', '--cache', 'c'],
      '--cache applies to a plan with --base: it holds the base, and a run has none',
    ],
    [['run', '--json'], '--json applies to plan, not run'],
    [['plan', '--lang', 'python'], '--lang applies to init, not plan'],
  ])('stategate %j is refused', (args, message) => {
    const res = stategate(tmpdir(), args);
    expect(res.stderr).toBe(`stategate: ${message}\n`);
    expect(res.stdout).toBe('');
    expect(res.code).toBe(1);
  });
});
