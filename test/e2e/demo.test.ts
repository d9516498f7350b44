// The demo's three comparisons through real git refs: the expected class of every case, pinned,
// on the embedded engine and on the postgres server.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/types.js';
import { runCompare } from '../../src/run/compare.js';
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
          expect(timeout.divergence?.sentence).toMatch(/^At step \d+ the base called get_refund_policy\(.*\); the head called refund_payment\(/);
          expect(timeout.state_diff).toContainEqual(
            expect.objectContaining({ table: 'orders', key: 'ORD-1101', column: 'refund_count', base: 1, head: 2 }),
          );
          expect(md).toContain('refund-timeout-after-mutation');
          expect(md).toContain(timeout.divergence!.sentence.slice(0, 40));
          expect(md).toMatch(/refund_count \| 1 \| 2/);
        }
      });
    }
  });
}
