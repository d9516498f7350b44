// compare --cache end to end on real Postgres: the second run of the same base starts the base's
// agent zero times and classifies exactly as the first; a changed suite or repeats count is a miss;
// an interrupted run and a base with uncommitted changes store nothing.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/model/report.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { renderTerminal } from '../../src/report/terminal.js';
import type { ProgressEvent } from '../../src/run/api.js';
import { runCompare } from '../../src/run/pipeline.js';
import { agentSharedDir } from '../helpers/agent-dir.js';
import { git, writeDemoFiles } from '../helpers/demo-repo.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SCENARIOS = ['refund-happy-path', 'refund-timeout-after-mutation', 'refund-success-without-effect'];

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

// Every agent start appends "<side> <episode>" here; the agents run with a /tmp of their own.
const startsDir = agentSharedDir('sg-cache-starts-');
dirs.push(startsDir);
const STARTS = join(startsDir, 'starts');

/** Writes the demo at `version` with three scenarios and an agent that logs its start first. */
function writeSide(dir: string, version: string, side: 'base' | 'head'): void {
  writeDemoFiles(dir, version);
  for (const f of readdirSync(join(dir, 'scenarios')))
    if (!SCENARIOS.includes(f.replace(/\.yaml$/, ''))) rmSync(join(dir, 'scenarios', f));
  writeFileSync(
    join(dir, 'counted-agent.mjs'),
    `import { appendFileSync } from 'node:fs';
appendFileSync(${JSON.stringify(STARTS)}, process.argv[2] + ' ' + process.env.STATEGATE_EPISODE + '\\n');
await import('./examples/refund-agent/agent.mjs');
`,
  );
  const config = readFileSync(join(dir, 'stategate.yml'), 'utf8').replace(
    'command: node examples/refund-agent/agent.mjs',
    `command: node counted-agent.mjs ${side}`,
  );
  writeFileSync(join(dir, 'stategate.yml'), config);
}

const repo = mkdtempSync(join(tmpdir(), 'sg-cache-repo-'));
dirs.push(repo);
git(repo, 'init', '-q', '-b', 'main');
git(repo, 'config', 'user.email', 'ci@example.com');
git(repo, 'config', 'user.name', 'ci');
writeSide(repo, 'v1.2.4', 'base');
git(repo, 'add', '-A');
git(repo, 'commit', '-qm', 'base');
git(repo, 'tag', 'base');
writeSide(repo, 'v1.3.0', 'head');
git(repo, 'add', '-A');
git(repo, 'commit', '-qm', 'head');
git(repo, 'tag', 'head');
// Adaptive repeats from the base's stategate.yml: both sides with repeats {min: 2, max: 6}.
for (const [tag, version, side] of [
  ['adaptive-base', 'v1.2.4', 'base'],
  ['adaptive-head', 'v1.3.0', 'head'],
] as const) {
  writeSide(repo, version, side);
  const config = join(repo, 'stategate.yml');
  writeFileSync(config, readFileSync(config, 'utf8').replace(/^repeats: 3$/m, 'repeats: { min: 2, max: 6 }'));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', tag);
  git(repo, 'tag', tag);
}

/** Episode ids of the agent starts since the last call. */
let seen = 0;
function startedSinceLast(): string[] {
  const lines = existsSync(STARTS) ? readFileSync(STARTS, 'utf8').split('\n').filter(Boolean) : [];
  const fresh = lines.slice(seen);
  seen = lines.length;
  return fresh.map((l) => l.split(' ')[1]);
}

/** Agent starts by side since the last call. */
function startsSinceLast(): { base: number; head: number } {
  const ids = startedSinceLast();
  return {
    base: ids.filter((id) => id.includes('.base.')).length,
    head: ids.filter((id) => id.includes('.head.')).length,
  };
}

async function compare(
  name: string,
  opts: { cache: string; head?: string; base?: string; repeats?: number | null; signal?: AbortSignal },
): Promise<{ report: Report; logs: string[] }> {
  const logs: string[] = [];
  const { report } = await runCompare({
    base: opts.base ?? 'base',
    head: opts.head ?? 'head',
    repo,
    out: join(repo, '.stategate', name),
    repeats: opts.repeats === null ? undefined : (opts.repeats ?? 2),
    engine: 'postgres',
    databaseUrl: ADMIN_URL,
    cache: opts.cache,
    signal: opts.signal,
    onProgress: (e: ProgressEvent) => {
      if (e.type === 'log') logs.push(e.message);
    },
  });
  return { report, logs };
}

function classesOf(report: Report): Record<string, string> {
  return Object.fromEntries(report.cases.map((c) => [c.id, c.class]));
}

function baseSummaries(report: Report): Record<string, unknown> {
  return Object.fromEntries(report.cases.map((c) => [c.id, c.base]));
}

function entries(cache: string): string[] {
  return existsSync(cache) ? readdirSync(cache).filter((f) => f.endsWith('.json')) : [];
}

describe('compare --cache', () => {
  const cache = mkdtempSync(join(tmpdir(), 'sg-cache-dir-'));
  dirs.push(cache);

  it('reuses the base on the second run: no base agent starts, the same classes', {
    timeout: 600_000,
  }, async () => {
    startsSinceLast();
    const first = await compare('first', { cache });
    expect(startsSinceLast()).toEqual({ base: 6, head: 6 });
    expect(first.report.baseline_cache).toMatchObject({ hit: false, reused_episodes: 0, saved: true });
    expect(entries(cache)).toHaveLength(1);

    const second = await compare('second', { cache });
    expect(startsSinceLast()).toEqual({ base: 0, head: 6 });
    expect(classesOf(second.report)).toEqual(classesOf(first.report));
    expect(classesOf(second.report)['refund-timeout-after-mutation']).toBe('new-critical-failure');
    expect(baseSummaries(second.report)).toEqual(baseSummaries(first.report));
    expect(second.report.verdict).toBe(first.report.verdict);
    expect(second.report.baseline_cache).toEqual({
      key: first.report.baseline_cache!.key,
      hit: true,
      reused_episodes: 6,
      stored_at: first.report.started_at,
      saved: false,
    });
    // The reader sees what was reused and from when, in the comment and in the terminal.
    const when = `${first.report.started_at!.slice(0, 16).replace('T', ' ')} UTC`;
    const line = `base: 6 episodes reused from the run of ${when} (cache key ${first.report.baseline_cache!.key.slice(0, 12)})`;
    expect(renderMarkdown(second.report, { variant: 'comment' })).toContain(line);
    expect(renderTerminal(second.report, { color: false })).toContain(line);
  });

  it('grades reused base episodes again from their records: a verdict written into the entry is not believed', {
    timeout: 600_000,
  }, async () => {
    // A copy of the entry the first run stored, edited the way a forger would: every base repeat of
    // the case the head breaks now says it failed too, which would make the head's new critical
    // failure look unchanged. The records (calls, rows) are left as they were: the evidence.
    const forged = mkdtempSync(join(tmpdir(), 'sg-cache-forged-'));
    dirs.push(forged);
    cpSync(cache, forged, { recursive: true });
    const [file] = entries(forged);
    const entry = JSON.parse(readFileSync(join(forged, file), 'utf8'));
    const episodes = entry.episodes['refund-timeout-after-mutation'] as {
      passed: boolean;
      results: { verdict: string }[];
    }[];
    expect(episodes.length).toBeGreaterThan(0);
    for (const g of episodes) {
      g.passed = false;
      for (const r of g.results) r.verdict = 'fail';
    }
    writeFileSync(join(forged, file), JSON.stringify(entry));

    startsSinceLast();
    const run = await compare('forged', { cache: forged });
    expect(startsSinceLast()).toEqual({ base: 0, head: 6 });
    expect(run.report.baseline_cache?.hit).toBe(true);
    expect(classesOf(run.report)['refund-timeout-after-mutation']).toBe('new-critical-failure');
    expect(run.report.verdict).toBe('BLOCK');
  });

  it('misses when the suite or the repeats change', { timeout: 600_000 }, async () => {
    // The head edits one scenario: the pinned suite (and with it every seed) is another.
    const edited = mkdtempSync(join(tmpdir(), 'sg-cache-head-'));
    dirs.push(edited);
    git(repo, 'worktree', 'add', '-q', '--detach', edited, 'head');
    const file = join(edited, 'scenarios', 'refund-happy-path.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^(description: .*)$/m, '$1 (edited)'));
    expect(readFileSync(file, 'utf8')).toContain('(edited)');
    startsSinceLast();
    const suiteChanged = await compare('suite-changed', { cache, head: edited });
    expect(startsSinceLast()).toEqual({ base: 6, head: 6 });
    expect(suiteChanged.report.baseline_cache).toMatchObject({ hit: false, reused_episodes: 0 });

    const moreRepeats = await compare('more-repeats', { cache, repeats: 1 });
    expect(startsSinceLast()).toEqual({ base: 3, head: 3 });
    expect(moreRepeats.report.baseline_cache).toMatchObject({ hit: false, reused_episodes: 0 });
    git(repo, 'worktree', 'remove', '--force', edited);
  });

  it('counts cached base episodes toward adaptive repeats and runs only the missing looks', {
    timeout: 900_000,
  }, async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'sg-cache-adaptive-'));
    dirs.push(fresh);
    const baseRuns = (r: Report) => r.cases.reduce((n, c) => n + (c.base?.runs ?? 0), 0);
    startedSinceLast();
    // Base against itself: no case can be worse, every case stops at min (2 repeats of 3 cases).
    const same = await compare('adaptive-same', {
      cache: fresh,
      base: 'adaptive-base',
      head: 'adaptive-base',
      repeats: null,
    });
    expect(same.report.repeats_policy).toMatchObject({ min: 2, max: 6 });
    expect(baseRuns(same.report)).toBe(6);
    startedSinceLast();

    // The regressing head needs more looks: repeats 1 and 2 of the base come from the cache.
    const regressed = await compare('adaptive-regressed', {
      cache: fresh,
      base: 'adaptive-base',
      head: 'adaptive-head',
      repeats: null,
    });
    const started = startedSinceLast().filter((id) => id.includes('.base.'));
    expect(baseRuns(regressed.report)).toBeGreaterThan(6);
    expect(started.length).toBe(baseRuns(regressed.report) - 6);
    expect(started.filter((id) => /\.r[12]$/.test(id))).toEqual([]);
    expect(regressed.report.baseline_cache).toMatchObject({ hit: true, reused_episodes: 6, saved: true });
    for (const c of regressed.report.cases) expect(c.repeats_decision?.base, c.id).toBe(c.base?.runs);

    // The same push again: every base episode of every look is cached now.
    const again = await compare('adaptive-again', {
      cache: fresh,
      base: 'adaptive-base',
      head: 'adaptive-head',
      repeats: null,
    });
    expect(startsSinceLast().base).toBe(0);
    expect(again.report.baseline_cache).toMatchObject({
      hit: true,
      reused_episodes: baseRuns(regressed.report),
    });
    expect(classesOf(again.report)).toEqual(classesOf(regressed.report));
  });

  it('stores nothing from an interrupted run', { timeout: 600_000 }, async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'sg-cache-int-'));
    dirs.push(fresh);
    const controller = new AbortController();
    startsSinceLast();
    const running = compare('interrupted', { cache: fresh, signal: controller.signal });
    const startsNow = () =>
      existsSync(STARTS) ? readFileSync(STARTS, 'utf8').split('\n').filter(Boolean).length : 0;
    const deadline = Date.now() + 240_000;
    while (startsNow() === seen && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(startsNow()).toBeGreaterThan(seen);
    controller.abort();
    const { report, logs } = await running;
    expect(report.interrupted).toBe(true);
    expect(report.baseline_cache).toMatchObject({
      hit: false,
      saved: false,
      note: 'not stored: the run was interrupted',
    });
    expect(entries(fresh)).toEqual([]);
    expect(logs).toContain("baseline cache: the base's episodes were not stored: the run was interrupted");
  });

  it('never caches a base with uncommitted changes', { timeout: 600_000 }, async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'sg-cache-dirty-'));
    dirs.push(fresh);
    const dirty = mkdtempSync(join(tmpdir(), 'sg-cache-base-'));
    dirs.push(dirty);
    git(repo, 'worktree', 'add', '-q', '--detach', dirty, 'base');
    writeFileSync(join(dirty, 'notes.txt'), 'not committed\n');
    const { report, logs } = await compare('dirty', { cache: fresh, base: dirty, repeats: 1 });
    expect(report.sides.base?.dirty).toBe(true);
    expect(report.baseline_cache).toBeUndefined();
    expect(entries(fresh)).toEqual([]);
    expect(logs.some((l) => l.startsWith('baseline cache: not used: the base has uncommitted changes'))).toBe(
      true,
    );
    git(repo, 'worktree', 'remove', '--force', dirty);
  });
});
