// `stategate plan`: what a compare (or, with --dir, a run) would take before anything runs: the
// episodes per side and their model spend, measured from the baseline cache when it has a matching
// entry. It checks out and loads the suites as the run would (decideSuite), and starts no engine,
// no agent and no database.
import { resolve } from 'node:path';
import { ConfigError } from '../config/suite.js';
import { ENGINE_NAMES } from '../model/engine.js';
import type { ProgressEvent } from '../run/api.js';
import { BaselineCache } from '../run/baseline-cache.js';
import { type CacheSource, estimateRun, type RunEstimate } from '../run/estimate.js';
import { decideSuite, type SuiteDecision } from '../run/plan.js';
import { ResourceScope } from '../run/scope.js';
import { fail, printProblems, runOptions } from './commands.js';
import type { CliValues } from './main.js';

/** Options a plan has no use for: it writes no report, runs no episode and opens no database. */
const NOT_FOR_PLAN = ['out', 'fail-on', 'junit', 'concurrency', 'sudo', 'database-url'] as const;

export async function commandPlan(values: CliValues): Promise<number> {
  for (const name of NOT_FOR_PLAN)
    if (values[name] !== undefined)
      return fail(`--${name} means nothing to plan: it runs no episode and writes no report`);
  if (values.base !== undefined && values.head === undefined)
    return fail('plan --base needs --head: it estimates a compare of the two');
  if (values.head !== undefined && values.dir !== undefined)
    return fail('plan takes --head (with --base, a compare) or --dir (a run), not both');
  if (values.base === undefined && values.cache !== undefined)
    return fail('--cache applies to a plan with --base: it holds the base, and a run has none');
  const scope = new ResourceScope();
  try {
    const opts = { ...runOptions(values), onProgress: undefined };
    const base = values.base ?? null;
    const head = values.head ?? values.dir ?? '.';
    const warnings: string[] = [];
    const progress = (e: ProgressEvent) => {
      if (e.type === 'log' && e.level === 'warn') warnings.push(e.message);
    };
    const repo = resolve(opts.repo ?? process.cwd());
    const cacheDir = values.cache ? resolve(repo, values.cache) : null;
    const decided = await decideSuite({ ...opts, base, head }, cacheDir ? [cacheDir] : [], scope, progress);
    const cache = cacheDir ? readCache(cacheDir, decided, opts.engine, (m) => warnings.push(m)) : null;
    const estimate = estimateRun({
      sides: decided.sides,
      scenarioIds: decided.scenarios.map((s) => s.id),
      repeats: decided.repeats,
      runBudgetUsd: decided.suite.config.budget?.run_usd ?? null,
      cache,
    });
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ ...estimate, warnings }, null, 2)}\n`);
    } else {
      for (const w of warnings) process.stderr.write(`stategate: warning: ${w}\n`);
      process.stdout.write(renderEstimate(estimate, cacheDir));
    }
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      printProblems(err.problems);
      return 1;
    }
    return fail((err as Error).message);
  } finally {
    await scope.close();
  }
}

/**
 * The cache entry of this plan's key. The engine is part of the key and is known only once a run
 * starts one, so every engine the run could choose is tried: --engine or database.engine when set.
 */
function readCache(
  dir: string,
  decided: SuiteDecision,
  requested: string | undefined,
  warn: (message: string) => void,
): CacheSource | null {
  const base = decided.checkouts.base;
  if (!base || !decided.baselineKey) return null;
  if (base.dirty || typeof base.tree !== 'string') {
    warn(
      `baseline cache: not used: the base ${base.dirty ? 'has uncommitted changes' : 'is not a git checkout'}, so a compare would not cache it either`,
    );
    return null;
  }
  const configured = requested ?? decided.suite.config.database.engine;
  const engines = configured === 'auto' ? ENGINE_NAMES : [configured];
  for (const engine of engines) {
    const cache = BaselineCache.open(dir, { base_tree: base.tree, ...decided.baselineKey, engine }, warn);
    if (cache.size > 0 && cache.entryStoredAt)
      return { file: cache.file, storedAt: cache.entryStoredAt, engine, costs: cache.measuredCosts() };
  }
  return null;
}

function money(x: number | null): string {
  return x === null ? 'unknown' : `$${x.toFixed(x < 1 ? 4 : 2)}`;
}

/** The human report: a few lines. */
export function renderEstimate(e: RunEstimate, cacheDir: string | null): string {
  const lines: string[] = [];
  const sides = e.sides.join(' and ');
  const r = e.repeats;
  const per = e.episodes.per_side;
  if (r.adaptive) {
    lines.push(
      `${e.scenarios} scenarios x ${r.min} to ${r.max} repeats (adaptive) on ${sides}: ${per.min} to ${per.max} episodes per side, ${e.episodes.total.min} to ${e.episodes.total.max} in all.`,
      `A scenario that never fails takes ${r.never_failing} repeats per side; if none fails: ${e.episodes.total.never_failing} episodes in all.`,
    );
  } else {
    lines.push(
      `${e.scenarios} scenarios x ${r.min} repeats on ${sides}: ${per.min} episodes per side, ${e.episodes.total.min} in all.`,
    );
  }
  if (e.source.kind === 'baseline-cache') {
    lines.push(
      `Model spend, measured from the baseline cache (stored ${e.source.stored_at}, engine ${e.source.engine}): ${money(e.usd_per_episode)} per episode.`,
    );
    const unknown = e.per_scenario.filter((s) => s.usd_per_episode === null).map((s) => s.id);
    if (unknown.length > 0)
      lines.push(`Not measured (no cached episodes, or a model without prices): ${unknown.join(', ')}.`);
  } else {
    lines.push(
      cacheDir
        ? `Model spend: unknown (no baseline cache entry in ${cacheDir} matches this base and suite).`
        : 'Model spend: unknown (no --cache DIR with a matching entry to measure it from).',
    );
  }
  const c = e.cost_usd;
  if (c.min !== null)
    lines.push(
      r.adaptive
        ? `Estimated spend: ${money(c.min)} to ${money(c.max)} (${money(c.never_failing)} if no scenario fails).`
        : `Estimated spend: ${money(c.min)}.`,
    );
  if (e.budget.run_usd !== null) {
    lines.push(
      e.budget.episodes_fit !== null
        ? `budget.run_usd ${money(e.budget.run_usd)}: at most ${e.budget.episodes_fit} episodes fit the budget at the measured cost.`
        : e.usd_per_episode === 0
          ? `budget.run_usd ${money(e.budget.run_usd)}: the measured cost is $0, so the budget cuts no episode.`
          : `budget.run_usd ${money(e.budget.run_usd)}: how many episodes fit is unknown without a measured cost.`,
    );
  }
  return `${lines.join('\n')}\n`;
}
