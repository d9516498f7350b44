// The demo's three comparisons through real git refs: the expected class of every case, pinned,
// on the embedded engine and on the postgres server.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reportShape } from '../../scripts/golden-outputs.js';
import type { GradedEpisode, Side } from '../../src/model/episode.js';
import type { Report } from '../../src/model/report.js';
import { runCompare } from '../../src/run/pipeline.js';
import { PinMismatchError, verifyPinned } from '../../src/run/verify-pin.js';
import { demoRepo, git } from '../helpers/demo-repo.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const EXPECTED: Record<string, { verdict: string; classes: Record<string, string> }> = {
  'v1.2.4..v1.3.0': {
    verdict: 'BLOCK',
    classes: {
      'refund-timeout-after-mutation': 'new-critical-failure',
      'refund-success-without-effect': 'new-critical-failure',
      'refund-happy-path': 'regressed',
    },
  },
  'v1.3.0..v1.3.1': {
    verdict: 'PASS',
    classes: {
      'refund-timeout-after-mutation': 'improved',
      'refund-success-without-effect': 'improved',
      'refund-happy-path': 'improved',
    },
  },
  'v1.2.4..v1.3.1': { verdict: 'PASS', classes: {} },
};

const { repo } = demoRepo(['v1.2.4', 'v1.3.0', 'v1.3.1']);
afterAll(() => rmSync(repo, { recursive: true, force: true }));

function classesOf(report: Report): Record<string, string> {
  return Object.fromEntries(report.cases.map((c) => [c.id, c.class]));
}

for (const engine of ['embedded', 'postgres'] as const) {
  describe(`the demo on the ${engine} engine`, () => {
    for (const [pair, expected] of Object.entries(EXPECTED)) {
      it(`${pair}: ${expected.verdict}`, { timeout: 900_000 }, async () => {
        const [base, head] = pair.split('..');
        const out = join(repo, '.stategate', engine, pair);
        const result = await runCompare({
          base,
          head,
          repo,
          out,
          repeats: 2,
          engine,
          databaseUrl: engine === 'postgres' ? ADMIN_URL : undefined,
        });
        const { report } = result;
        expect(report.engine).toBe(engine);
        const classes = classesOf(report);
        expect(Object.keys(classes)).toHaveLength(10);
        for (const [id, cls] of Object.entries(classes)) {
          expect(`${id}: ${cls}`).toBe(`${id}: ${expected.classes[id] ?? 'unchanged'}`);
        }
        expect(report.verdict).toBe(expected.verdict);
        expect(report.cases.every((c) => !c.flaky.base && !c.flaky.head)).toBe(true);
        // A fixed N is stated with its exact error rates; no case is flaky, so no warning.
        expect(report.repeats_rates).toMatchObject({ min: 2, max: 2, adaptive: false, meets_targets: false });
        expect(report.repeats_warning).toBeUndefined();
        // the pair ran on the real refs, and the report proves what both sides ran
        expect(report.sides.base?.sha).toBe(git(repo, 'rev-parse', `${base}^{commit}`));
        expect(report.sides.head?.sha).toBe(git(repo, 'rev-parse', `${head}^{commit}`));
        expect(Object.keys(report.pin.scenarios)).toHaveLength(10);
        // worktrees are gone afterwards
        expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(1);
        expect(existsSync(join(out, 'episodes.jsonl'))).toBe(true);

        if (pair === 'v1.2.4..v1.3.0') {
          const md = readFileSync(result.markdownPath, 'utf8');
          const timeout = report.cases.find((c) => c.id === 'refund-timeout-after-mutation')!;
          expect(timeout.divergence?.sentence).toMatch(
            /^At step \d+ the base called get_refund_policy\(.*\); the head called refund_payment\(/,
          );
          expect(timeout.state_diff).toContainEqual(
            expect.objectContaining({
              table: 'orders',
              key: 'ORD-1101',
              column: 'refund_count',
              base: 1,
              head: 2,
            }),
          );
          expect(md).toContain('refund-timeout-after-mutation');
          expect(md).toContain(timeout.divergence!.sentence.slice(0, 40));
          expect(md).toMatch(/refund_count \| 1 \| 2/);

          // The golden outputs render a fixture of this pair's report.json: a fresh run still has its
          // shape (every key, at every level) and its classes, so the goldens show what a run shows.
          const fixture = JSON.parse(
            readFileSync(join(import.meta.dirname, '..', 'report', 'golden', 'demo', 'report.json'), 'utf8'),
          ) as Report;
          const fresh = reportShape(report);
          const golden = reportShape(fixture);
          expect(fresh.classes).toEqual(golden.classes);
          expect(fresh.keys).toEqual(golden.keys);
          // The step table names its episodes and holds what the tools recorded.
          expect(timeout.steps?.base?.outcome).toBe('passed');
          expect(timeout.steps?.head.outcome).toBe('failed');
          expect(timeout.steps?.head.steps.map((s) => s.tool)).toContain('refund_payment');

          // The stored runs prove the pair; breaking the pinning on purpose is caught.
          const stored = (): Map<string, Record<Side, GradedEpisode[]>> => {
            const byCase = new Map<string, Record<Side, GradedEpisode[]>>();
            for (const line of readFileSync(join(out, 'episodes.jsonl'), 'utf8').trim().split('\n')) {
              const g = JSON.parse(line) as GradedEpisode;
              if (!byCase.has(g.record.scenario)) byCase.set(g.record.scenario, { base: [], head: [] });
              byCase.get(g.record.scenario)![g.record.side].push(g);
            }
            return byCase;
          };
          const pin = { suiteHash: report.pin.suite_hash, scenarios: report.pin.scenarios };
          expect(() => verifyPinned(pin, stored())).not.toThrow();
          const otherSeed = stored();
          otherSeed.get('refund-happy-path')!.head[0].record.seed += 1;
          expect(() => verifyPinned(pin, otherSeed)).toThrow(PinMismatchError);
          expect(() => verifyPinned(pin, otherSeed)).toThrow(
            /refund-happy-path repeat \d: base ran seed \d+, head ran seed \d+/,
          );
          const otherContent = stored();
          otherContent.get('refund-rate-limited')!.base[0].record.pin!.scenario = '0'.repeat(64);
          expect(() => verifyPinned(pin, otherContent)).toThrow(
            /refund-rate-limited\.base\.r\d: ran scenario content 000000000000/,
          );
        }
      });
    }
  });
}
