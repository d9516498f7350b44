// The run plan, on the repository's own demo suite: one hash function for every hash (the template
// the engine builds has the hash the pin was built from), fixed repeats as one look at min = max,
// each stategate.yml loaded once, and the counts the executor reserves databases by.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/model/content-hash.js';
import { prepareRun } from '../../src/run/plan.js';
import { ResourceScope } from '../../src/run/scope.js';
import { createPostgresEngine } from '../../src/sandbox/postgres.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';

const repo = resolve(import.meta.dirname, '../..');
const out = mkdtempSync(join(tmpdir(), 'sg-plan-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

async function planOf(extra: { repeats?: number; shard?: { index: number; total: number } } = {}) {
  const scope = new ResourceScope();
  try {
    return await prepareRun({ base: null, head: repo, repo, out, ...extra }, scope, () => undefined);
  } finally {
    await scope.close();
  }
}

describe('prepareRun', () => {
  it('pins the template with the hash the suite hash is built from, and the engine builds that hash', async () => {
    const plan = await planOf();
    expect(plan.pin.templateHash).toBe(contentHash(plan.suite.template));
    expect(plan.pin.suiteHash).toBe(
      contentHash({
        templateHash: plan.pin.templateHash,
        twinsHash: plan.pin.twinsHash,
        scenarios: plan.pin.scenarios,
      }),
    );
    const engine = await createPostgresEngine({ adminUrl: TEST_DATABASE_URL, reason: 'test server' });
    try {
      const template = await engine.buildTemplate(plan.suite.template);
      expect(template.hash).toBe(plan.pin.templateHash);
    } finally {
      await engine.close();
    }
  }, 120_000);

  it('plans fixed repeats as one look at min = max, with no sequential test', async () => {
    const fromConfig = await planOf();
    expect(fromConfig.repeats).toEqual({ min: 3, max: 3, sequential: null });
    const fixed = await planOf({ repeats: 5 });
    expect(fixed.repeats).toEqual({ min: 5, max: 5, sequential: null });
    // Head alone: 10 scenarios x 5 repeats x 1 side; the reservation is two per worker (4 at once).
    expect(fixed.databases).toEqual({ perEpisode: 1, reserve: 8, mostTakes: 50 });
  });

  it('plans only the shard slice', async () => {
    const whole = await planOf();
    const slices = await Promise.all([1, 2, 3].map((index) => planOf({ shard: { index, total: 3 } })));
    const ids = slices.flatMap((p) => p.scenarios.map((s) => s.id)).sort();
    expect(ids).toEqual(whole.scenarios.map((s) => s.id).sort());
    for (const p of slices) expect(p.pin.suiteHash).toBe(whole.pin.suiteHash);
  });
});
