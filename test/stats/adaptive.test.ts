// Adaptive repeats through the real scheduler, and the classes the sequential test gives.
import { describe, expect, it } from 'vitest';
import { runDecisions } from '../../bench/decisions/decisions.js';
import { syntheticEpisode, syntheticScenario } from '../../bench/decisions/synthetic.js';
import { compareCase } from '../../src/compare/case.js';
import { DEFAULT_REPEATS } from '../../src/config/schema.js';
import type { GradedEpisode, Side } from '../../src/model/episode.js';
import type { PlannedEpisode } from '../../src/plan/expand.js';
import { seedFor } from '../../src/plan/pin.js';
import { adaptivePolicy, runAdaptive } from '../../src/run/adaptive.js';
import { schedule } from '../../src/run/scheduler.js';
import { passing, repeats, scenario } from '../compare/builders.js';

const policy = { min: 3, max: 20 };

/** Runs runAdaptive with a head that fails the listed repeats and a base that never fails. */
async function run(headFailing: (repeat: number) => boolean) {
  const s = syntheticScenario('refund');
  const graded = new Map<string, Record<Side, GradedEpisode[]>>([['refund', { base: [], head: [] }]]);
  const planned: PlannedEpisode[] = [];
  const decisions = await runAdaptive({
    scenarios: [s],
    sides: ['base', 'head'],
    suiteHash: 'h',
    policy,
    episodesOf: (id) => graded.get(id)!,
    runBatch: async (batch) => {
      planned.push(...batch);
      await schedule(
        batch,
        async (p) =>
          syntheticEpisode(p, { base: 0, head: p.side === 'head' && headFailing(p.repeat) ? 1 : 0 }, 0),
        { concurrency: 2, onDone: (g, p) => void graded.get(p.scenario.id)![p.side].push(g) },
      );
    },
  });
  return { s, graded, planned, decision: decisions.get('refund')! };
}

describe('runAdaptive', () => {
  it('stops a case whose sides agree at min', async () => {
    const { planned, decision } = await run(() => false);
    expect(planned.map((p) => p.id).sort()).toEqual([
      'refund.base.r1',
      'refund.base.r2',
      'refund.base.r3',
      'refund.head.r1',
      'refund.head.r2',
      'refund.head.r3',
    ]);
    expect(decision.more).toBe(false);
  });

  it('spends more repeats on an undecided head failure, with the same seeds on both sides', async () => {
    const { planned, decision } = await run((r) => r === 2);
    // One failure in 20 never convinces the test: the case runs to max and stays undecided.
    expect(Math.max(...planned.map((p) => p.repeat))).toBe(20);
    for (const p of planned) expect(p.seed).toBe(seedFor('h', 'refund', p.repeat));
    expect(planned.filter((p) => p.side === 'base').length).toBe(20);
    expect(planned.filter((p) => p.side === 'head').length).toBe(20);
    expect(decision.expectations.refunded_once.decision).toBe('undecided');
  });

  it('stops as soon as a look decides', async () => {
    const { planned, decision } = await run((r) => r >= 2);
    // Looks at 3 (2 of 3 failed: p = 0.11, go on) and 5 (4 of 5 failed: worse).
    expect(Math.max(...planned.map((p) => p.repeat))).toBe(5);
    expect(decision.expectations.refunded_once.decision).toBe('worse');
  });

  it('counts base episodes held before the first look (a cache) and runs only what is missing', async () => {
    const s = syntheticScenario('refund');
    const cached = Array.from({ length: 12 }, (_, i) =>
      syntheticEpisode(
        {
          id: `refund.base.r${i + 1}`,
          scenario: s,
          side: 'base',
          repeat: i + 1,
          seed: seedFor('h', 'refund', i + 1),
        },
        { base: 0, head: 0 },
        0,
      ),
    );
    const graded = new Map<string, Record<Side, GradedEpisode[]>>([
      ['refund', { base: [...cached], head: [] }],
    ]);
    const planned: PlannedEpisode[] = [];
    const decisions = await runAdaptive({
      scenarios: [s],
      sides: ['base', 'head'],
      suiteHash: 'h',
      policy: { min: 3, max: 20 },
      episodesOf: (id) => graded.get(id)!,
      runBatch: async (batch) => {
        planned.push(...batch);
        await schedule(batch, async (p) => syntheticEpisode(p, { base: 0, head: p.repeat >= 2 ? 1 : 0 }, 0), {
          concurrency: 2,
          onDone: (g, p) => void graded.get(p.scenario.id)![p.side].push(g),
        });
      },
    });
    // The head fails from repeat 2 on; the base's 12 cached repeats cover every look up to 12.
    expect(planned.filter((p) => p.side === 'base')).toEqual([]);
    expect(planned.map((p) => p.repeat)).toEqual([1, 2, 3]);
    // 2 of 3 head failures against 0 of 12 base repeats already decide: the cache made the test stronger.
    expect(decisions.get('refund')!.expectations.refunded_once.decision).toBe('worse');
    expect(graded.get('refund')!.base).toHaveLength(12);
  });

  it('refuses head episodes held before the first look: only the base may come from a cache', async () => {
    const s = syntheticScenario('refund');
    const planted = syntheticEpisode(
      { id: 'refund.head.r1', scenario: s, side: 'head', repeat: 1, seed: seedFor('h', 'refund', 1) },
      { base: 0, head: 0 },
      0,
    );
    const graded = { base: [] as GradedEpisode[], head: [planted] };
    let ran = 0;
    await expect(
      runAdaptive({
        scenarios: [s],
        sides: ['base', 'head'],
        suiteHash: 'h',
        policy: { min: 3, max: 20 },
        episodesOf: () => graded,
        runBatch: async (batch) => {
          ran += batch.length;
        },
      }),
    ).rejects.toThrow(/head episodes of refund exist before the first look/);
    expect(ran).toBe(0);
  });

  it('reads the policy from the repeats setting', () => {
    expect(adaptivePolicy(5)).toBeNull();
    expect(adaptivePolicy({ min: 5, max: 5 })).toBeNull();
    expect(adaptivePolicy({ min: 3, max: 20 })).toEqual({ min: 3, max: 20 });
  });
});

describe('classification with the sequential test', () => {
  const s = scenario('refund', [{ id: 'refunded_once', critical: true }]);
  const failing = (n: number, which: number[]) =>
    Array.from({ length: n }, (_, i) =>
      which.includes(i) ? { verdicts: { refunded_once: 'fail' as const } } : {},
    );

  it('blocks a critical break only when the test says the head is worse', () => {
    const c = compareCase(s, passing(s, 'base', 5), repeats(s, 'head', failing(5, [0, 1, 2, 3])), {
      sequential: policy,
    });
    expect(c.class).toBe('new-critical-failure');
    expect(c.reason).toMatch(
      /failed in 4 of 5 head repeats and passed in all 5 base repeats; the sequential test says the head is worse \(p=0\.0\d\d\)\.$/,
    );
    expect(c.repeats_decision).toEqual({ base: 5, head: 5, reason: expect.stringContaining('head worse') });
  });

  it('warns instead of blocking when the test could not tell the head worse by max', () => {
    const c = compareCase(s, passing(s, 'base', 20), repeats(s, 'head', failing(20, [4])), {
      sequential: policy,
    });
    expect(c.class).toBe('regressed');
    expect(c.reason).toContain('could not tell the head worse (p=0.');
    expect(c.reason).toContain('so it does not block');
  });

  it('calls a failure the base shares pre-existing: unchanged and flaky, with both counts', () => {
    const c = compareCase(s, repeats(s, 'base', failing(8, [1, 5])), repeats(s, 'head', failing(8, [3])), {
      sequential: policy,
    });
    expect(c.class).toBe('unchanged');
    expect(c.flaky).toEqual({ base: true, head: true });
    expect(c.reason).toBe(
      'The failure is pre-existing: refunded_once failed in 2 of 8 base and 1 of 8 head repeats; the sequential test cannot tell the sides apart.',
    );
    expect(c.expectations_changed?.[0]).toMatchObject({
      change: 'pre-existing',
      test: { decision: 'not-worse' },
    });
  });

  it('without adaptive repeats keeps the fixed-N rule: any head failure of a clean base blocks', () => {
    const c = compareCase(s, passing(s, 'base', 20), repeats(s, 'head', failing(20, [4])));
    expect(c.class).toBe('new-critical-failure');
    expect(c.repeats_decision).toBeUndefined();
  });
});

describe('the decision benchmark', () => {
  it('blocks every broken case and no unchanged one', async () => {
    const adaptive = { adaptive: policy };
    expect(await runDecisions({ base: 0, head: 1 }, adaptive, 20, 1)).toEqual({
      cases: 20,
      blocked: 20,
      episodes: 120,
    });
    expect(await runDecisions({ base: 0, head: 0 }, adaptive, 20, 2)).toEqual({
      cases: 20,
      blocked: 0,
      episodes: 120,
    });
    expect(await runDecisions({ base: 0, head: 1 }, { fixed: 5 }, 10, 3)).toEqual({
      cases: 10,
      blocked: 10,
      episodes: 100,
    });
  });

  // The draws are seeded, so these rates are the benchmark's own, not a sample of them: the default
  // (what a stategate.yml without repeats runs) holds the targets on 2,000 cases per agent through
  // the real scheduler, sequential test and classification.
  it('keeps false BLOCKs at or under 5% and detects 5% -> 40% at least 90% of the time with the default', async () => {
    const policy = { adaptive: { ...DEFAULT_REPEATS } };
    const cases = 2000;
    const unchanged = await runDecisions({ base: 0.2, head: 0.2 }, policy, cases, 101);
    const regression = await runDecisions({ base: 0.05, head: 0.4 }, policy, cases, 102);
    const fixed20 = await runDecisions({ base: 0.05, head: 0.4 }, { fixed: 20 }, cases, 102);
    expect(unchanged.blocked / cases).toBeLessThanOrEqual(0.05);
    expect(regression.blocked / cases).toBeGreaterThanOrEqual(0.9);
    expect(regression.episodes).toBeLessThan(fixed20.episodes);
    // Fixed N=20 misses most of it: the base fails once in 20 repeats, so nothing "broke".
    expect(fixed20.blocked / cases).toBeLessThan(0.5);
  });

  it('cannot reach 90% detection of 0% -> 30% from min 3: a head passes its first 3 repeats 34% of the time', async () => {
    const r = await runDecisions({ base: 0, head: 0.3 }, { adaptive: { min: 3, max: 20 } }, 2000, 103);
    expect(r.blocked / r.cases).toBeLessThan(1 - 0.7 ** 3 + 0.02);
  });
});

describe('the renderings of adaptive repeats', () => {
  it('say how many repeats each case took and why', async () => {
    const { compareSuite } = await import('../../src/compare/suite.js');
    const { renderMarkdown } = await import('../../src/report/markdown.js');
    const { renderTerminal } = await import('../../src/report/terminal.js');
    const s = scenario('refund', [{ id: 'refunded_once', critical: true }]);
    const head = repeats(
      s,
      'head',
      Array.from({ length: 5 }, (_, i) => (i < 4 ? { verdicts: { refunded_once: 'fail' as const } } : {})),
    );
    const report = compareSuite({
      pin: { suite_hash: 'h', template_hash: 't', scenarios: {} },
      sides: { base: { ref: 'main', sha: null }, head: { ref: 'pr', sha: null } },
      engine: 'postgres',
      cases: [{ scenario: s, base: passing(s, 'base', 5), head }],
      sequential: policy,
    });
    expect(report.repeats_policy).toEqual({ min: 3, max: 20, alpha: 0.02 });
    expect(report.verdict).toBe('BLOCK');
    const reason = report.cases[0].repeats_decision!.reason;
    expect(reason).toMatch(
      /^Stopped by the sequential test \(refunded_once: head worse, p=0\.0\d\d; base 5, head 5 repeats\)\.$/,
    );
    expect(renderMarkdown(report)).toContain(`**Repeats:** ${reason}`);
    expect(renderTerminal(report)).toContain(reason);
  });
});
