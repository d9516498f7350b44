// Adaptive repeats end to end: `repeats: {min, max}` through runCompare with real agents, a real
// gateway and real Postgres. The head guesses among customers of the same name; the base never does.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/pipeline.js';
import { ROOT } from '../helpers/demo-repo.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A checkout of the flaky agent's suite with `repeats: {min: 3, max: 8}` and `pass_k: [1, 2]`; `fixed` makes it pick by id. */
function side(fixed: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-adaptive-'));
  dirs.push(dir);
  cpSync(join(ROOT, 'examples', 'flaky-agent'), join(dir, 'examples', 'flaky-agent'), { recursive: true });
  cpSync(join(ROOT, 'examples', 'refund-agent'), join(dir, 'examples', 'refund-agent'), { recursive: true });
  const config = join(dir, 'examples', 'flaky-agent', 'stategate.yml');
  writeFileSync(
    config,
    readFileSync(config, 'utf8').replace(/^repeats: 8$/m, 'repeats: { min: 3, max: 8 }\npass_k: [1, 2]'),
  );
  if (fixed) {
    const agent = join(dir, 'examples', 'flaky-agent', 'agent.mjs');
    const text = readFileSync(agent, 'utf8');
    const guess = "matches[Math.floor(seededDraw(seed, 'pick-customer') * matches.length)]";
    expect(text).toContain(guess);
    writeFileSync(agent, text.replace(guess, "(matches.find((m) => m.id === 'CUS-7') ?? matches[0])"));
  }
  return dir;
}

describe('adaptive repeats through runCompare', () => {
  it('spends more repeats only on the case the head fails, with the same seeds on both sides', async () => {
    const base = side(true);
    const head = side(false);
    const { report, markdown } = await runCompare({
      base,
      head,
      repo: head,
      out: join(head, '.stategate'),
      config: 'examples/flaky-agent/stategate.yml',
      engine: 'postgres',
      databaseUrl: ADMIN_URL,
    });
    expect(report.repeats_policy).toEqual({ min: 3, max: 8, alpha: 0.02 });
    // The report states the range in force and its exact rates: 3..8 is too short to meet the targets.
    expect(report.repeats_rates).toMatchObject({
      min: 3,
      max: 8,
      adaptive: true,
      default: false,
      meets_targets: false,
    });
    expect(markdown).toContain('Repeats: adaptive, 3 to 8 per side. False BLOCK of an unchanged agent');
    const byId = Object.fromEntries(report.cases.map((c) => [c.id, c]));

    // One match, no guess: both sides agree at min and the case stops there.
    const unique = byId['resend-receipt-unique-name'];
    expect(unique.class).toBe('unchanged');
    expect(unique.repeats_decision).toMatchObject({ base: 3, head: 3 });
    expect(unique.repeats_decision!.reason).toMatch(/^Stopped at min/);

    const shared = byId['resend-receipt-shared-name'];
    const taken = shared.repeats_decision!;
    expect(taken.base).toBe(taken.head);
    expect([3, 5, 8]).toContain(taken.head);
    expect(report.seeds?.['base:resend-receipt-shared-name']?.sort()).toEqual(
      report.seeds?.['head:resend-receipt-shared-name']?.sort(),
    );
    expect(shared.base!.passes).toBe(taken.base);
    const headFails = shared.head!.runs - shared.head!.passes;
    if (headFails === 0) {
      expect(shared.class).toBe('unchanged');
      expect(taken.head).toBe(3);
    } else if (/head worse/.test(taken.reason)) {
      expect(shared.class).toBe('new-critical-failure');
      expect(report.verdict).toBe('BLOCK');
    } else {
      // Failures the test could not call worse by max warn instead of blocking.
      expect(taken.head).toBe(8);
      expect(shared.class).toBe('regressed');
    }
    expect(markdown).toContain('Repeats:');
    // pass_k in stategate.yml picks the k of pass@k and pass^k, per case and over the suite.
    expect(Object.keys(unique.head!.stats!.pass_at_k)).toEqual(['1', '2']);
    expect(Object.keys(report.stats!.head!.pass_hat_k)).toEqual(['1', '2']);
    expect(markdown).toContain('pass@2 100%, pass^2 100%');
  });
});
