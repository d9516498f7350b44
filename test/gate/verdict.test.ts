import { describe, expect, it } from 'vitest';
import { checkConclusion, DEFAULT_GATE, exitCodeFor, gateDecision } from '../../src/gate/index.js';
import type { CaseClass } from '../../src/model/classes.js';

/** The verdict alone of the gate's decision. */
const gateVerdict = (...args: Parameters<typeof gateDecision>) => gateDecision(...args).verdict;

const kase = (id: string, cls: CaseClass, flaky: { base?: boolean; head?: boolean } = {}) => ({
  id,
  class: cls,
  flaky: { base: flaky.base ?? false, head: flaky.head ?? false },
});

describe('gateVerdict', () => {
  it('is PASS when no case matches the gate', () => {
    expect(gateVerdict([kase('a', 'unchanged'), kase('b', 'improved')], DEFAULT_GATE)).toBe('PASS');
  });

  it('BLOCKs on a class in gate.block, before any warning', () => {
    const d = gateDecision(
      [kase('a', 'regressed'), kase('b', 'new-critical-failure'), kase('c', 'unchanged')],
      DEFAULT_GATE,
    );
    expect(d.verdict).toBe('BLOCK');
    expect(d.reasons.map((r) => [r.verdict, r.class, r.cases])).toEqual([
      ['BLOCK', 'new-critical-failure', ['b']],
      ['WARN', 'regressed', ['a']],
    ]);
    expect(d.reasons[0].text).toBe('1 new-critical-failure (b)');
  });

  it('WARNs on a class in gate.warn, and on a flaky side whatever the class', () => {
    expect(gateVerdict([kase('a', 'regressed')], DEFAULT_GATE)).toBe('WARN');
    // What could not be graded is no pass: the default gate blocks it.
    expect(gateVerdict([kase('a', 'incomplete'), kase('b', 'unchanged')], DEFAULT_GATE)).toBe('BLOCK');
    expect(gateVerdict([kase('a', 'unchanged', { base: true }), kase('b', 'unchanged')], DEFAULT_GATE)).toBe(
      'WARN',
    );
    expect(gateVerdict([kase('a', 'improved', { head: true })], { block: [], warn: [] })).toBe('PASS');
  });

  it('blocks on flaky when the gate says so', () => {
    const d = gateDecision([kase('a', 'unchanged', { head: true })], { block: ['flaky'], warn: [] });
    expect(d.verdict).toBe('BLOCK');
    expect(d.reasons[0]).toMatchObject({ class: 'flaky', cases: ['a'] });
  });

  it('lists at most three cases per reason', () => {
    const cases = ['a', 'b', 'c', 'd', 'e'].map((id) => kase(id, 'regressed'));
    expect(gateDecision(cases, DEFAULT_GATE).reasons[0].text).toBe('5 regressed (a, b, c and 2 more)');
  });

  it('is never PASS for an interrupted run, a merge missing shards, or a run that graded nothing', () => {
    const clean = [kase('a', 'unchanged')];
    const open = { block: [], warn: [] };
    expect(gateVerdict(clean, open, { interrupted: true })).toBe('WARN');
    expect(gateDecision(clean, open, { interrupted: true }).reasons[0].text).toBe(
      'the run was interrupted before every episode finished',
    );
    expect(gateDecision(clean, open, { missingShards: [2, 4] }).reasons[0].text).toBe(
      'shards 2, 4 did not report',
    );
    expect(gateDecision([], open).reasons[0].text).toBe('no case was graded: the run has no cases');
    expect(gateDecision([kase('a', 'incomplete')], open)).toMatchObject({
      verdict: 'WARN',
      reasons: [{ text: 'no case was graded: every case is incomplete' }],
    });
    expect(gateVerdict([kase('a', 'new-critical-failure')], DEFAULT_GATE, { interrupted: true })).toBe(
      'BLOCK',
    );
  });

  it('a weakened suite is at least WARN whatever gate.warn says, and BLOCK when gate.block lists suite-weakened', () => {
    const clean = [kase('a', 'unchanged')];
    const weakened = { suiteWeakened: ['scenario refund-twice removed', 'repeats lowered from 5 to 1'] };
    const open = { block: [], warn: [] };
    expect(gateVerdict(clean, open)).toBe('PASS');
    expect(gateDecision(clean, open, weakened)).toEqual({
      verdict: 'WARN',
      reasons: [
        {
          verdict: 'WARN',
          class: 'suite-weakened',
          cases: [],
          text: 'suite weakened: scenario refund-twice removed; repeats lowered from 5 to 1',
        },
      ],
    });
    const strict = { block: ['suite-weakened'], warn: ['regressed'] };
    expect(gateDecision([kase('b', 'regressed')], strict, weakened)).toMatchObject({
      verdict: 'BLOCK',
      reasons: [
        { verdict: 'BLOCK', class: 'suite-weakened' },
        { verdict: 'WARN', class: 'regressed' },
      ],
    });
    expect(gateVerdict(clean, strict, { suiteWeakened: [] })).toBe('PASS');
    const many = { suiteWeakened: Array.from({ length: 7 }, (_, i) => `scenario s${i} removed`) };
    expect(gateDecision(clean, open, many).reasons[0].text).toBe(
      'suite weakened: scenario s0 removed; scenario s1 removed; scenario s2 removed; scenario s3 removed; scenario s4 removed; and 2 more',
    );
  });

  it('a policy that is not the one asked for warns', () => {
    expect(
      gateDecision([kase('a', 'unchanged')], DEFAULT_GATE, { policyProblem: 'the base config is broken' }),
    ).toEqual({
      verdict: 'WARN',
      reasons: [{ verdict: 'WARN', class: null, cases: [], text: 'the base config is broken' }],
    });
  });

  it('rejects an unknown class with a message that lists the known ones', () => {
    expect(() => gateVerdict([], { block: ['new-critical'], warn: [] })).toThrow(
      "gate.block: unknown class 'new-critical' (expected one of new-critical-failure, regressed, improved, unchanged, incomplete, flaky, suite-weakened)",
    );
  });
});

describe('check conclusions and exit codes', () => {
  it('maps PASS, WARN and BLOCK to success, neutral and failure', () => {
    expect(checkConclusion('PASS')).toBe('success');
    expect(checkConclusion('WARN')).toBe('neutral');
    expect(checkConclusion('BLOCK')).toBe('failure');
  });

  it('exits 2 when the gate fails at the --fail-on level, else 0', () => {
    const table = (['PASS', 'WARN', 'BLOCK'] as const).map((v) => [
      v,
      exitCodeFor(v, 'block'),
      exitCodeFor(v, 'warn'),
      exitCodeFor(v, 'never'),
    ]);
    expect(table).toEqual([
      ['PASS', 0, 0, 0],
      ['WARN', 0, 2, 0],
      ['BLOCK', 2, 2, 0],
    ]);
  });
});
