import { describe, expect, it } from 'vitest';
import { compareSuite } from '../../src/compare/suite.js';
import { passing, scenario } from '../compare/builders.js';
import { facts, sampleReport, timeoutCase, unchangedCase } from '../report/fixtures.js';

describe('compareSuite', () => {
  it('assembles report.json: verdict, counts, cases sorted by id, and the facts of the run', () => {
    const r = sampleReport();
    expect(r.version).toBe(1);
    expect(r.verdict).toBe('BLOCK');
    expect(r.counts).toEqual({
      'new-critical-failure': 1,
      regressed: 1,
      improved: 1,
      unchanged: 2,
      incomplete: 1,
    });
    expect(r.cases.map((c) => c.id)).toEqual([
      'email-after-refund',
      'escalate-large-refund',
      'happy-path',
      'judge-politeness',
      'lookup-only',
      'refund-timeout-after-mutation',
    ]);
    expect(r.gate).toEqual({ block: ['new-critical-failure', 'incomplete'], warn: ['regressed', 'flaky'] });
    expect(r).toMatchObject({
      engine: 'postgres',
      engine_reason: 'database.url is set',
      repeats: 5,
      shard: null,
      interrupted: false,
    });
    expect(Object.keys(r).slice(0, 2)).toEqual(['version', 'verdict']);
    expect(Object.keys(r).at(-1)).toBe('cases');
  });

  it('explains the changed case from evidence', () => {
    const c = sampleReport().cases.find((x) => x.id === 'refund-timeout-after-mutation')!;
    expect(c.class).toBe('new-critical-failure');
    expect(c.flaky).toEqual({ base: false, head: true });
    expect(c.divergence?.sentence).toBe(
      'At step 2 the base called get_refund_policy(order_id=ORD-1001); the head called refund_payment(amount=40, order_id=ORD-1001).',
    );
    expect(c.state_diff).toEqual([
      { table: 'orders', key: 'ORD-1001', column: 'refund_count', base: 1, head: 2 },
      { table: 'orders', key: 'ORD-1001', column: 'refunded_amount', base: 40, head: 80 },
    ]);
    expect(c.flaky_explanation?.head).toMatch(
      /^At step 2, after every repeat called lookup_order\(order_id=ORD-1001\) and got 200, 3 of 5 repeats called get_refund_policy\(order_id=ORD-1001\)/,
    );
    expect(c.head?.stats).toMatchObject({ n: 5, c: 3, all_n: false });
    expect(c.file).toBe('scenarios/refund-timeout-after-mutation.yaml');
  });

  it('averages the suite per side', () => {
    const r = sampleReport();
    expect(r.stats?.base).toMatchObject({ scenarios: 6, excluded: 0 });
    expect(r.stats?.base?.all_n).toBeCloseTo(5 / 6, 12);
    expect(r.stats?.head?.all_n).toBeCloseTo(3 / 6, 12);
  });

  it('classifies a head-only run by the head alone', () => {
    const s = scenario('fresh', [{ id: 'x', critical: false }]);
    const r = compareSuite({
      ...facts({ sides: { base: null, head: { ref: 'main', sha: null } } }),
      cases: [{ scenario: s, base: null, head: passing(s, 'head', 3) }],
    });
    expect(r.verdict).toBe('PASS');
    expect(r.cases[0].base).toBeNull();
    expect(r.stats?.base).toBeUndefined();
    expect(r.cases[0].reason).toBe('New scenario (no base run): the head passed 3 of 3 repeats.');
  });

  it('is never PASS when interrupted or empty, and uses the given gate', () => {
    expect(compareSuite({ ...facts({ interrupted: true }), cases: [unchangedCase('a')] }).verdict).toBe(
      'WARN',
    );
    expect(compareSuite({ ...facts(), cases: [] }).verdict).toBe('WARN');
    expect(
      compareSuite({ ...facts({ gate: { block: [], warn: [] } }), cases: [timeoutCase()] }).verdict,
    ).toBe('PASS');
  });

  it('survives a JSON round trip unchanged', () => {
    const r = sampleReport();
    expect(JSON.parse(JSON.stringify(r))).toStrictEqual(r);
  });

  it('refuses a scenario given twice', () => {
    expect(() => compareSuite({ ...facts(), cases: [unchangedCase('a'), unchangedCase('a')] })).toThrow(
      "compareSuite: scenario 'a' is given twice",
    );
  });
});
