// Reports built the way a run builds them: graded episodes through compareSuite.
import type { CaseInput } from '../../src/compare/case.js';
import { compareSuite, type ReportFacts } from '../../src/compare/suite.js';
import type { GradedEpisode } from '../../src/model/episode.js';
import type { Report } from '../../src/model/report.js';
import { call, passing, repeats, scenario, stateDiff, tableDiff } from '../compare/builders.js';

export const facts = (o: Partial<ReportFacts> = {}): ReportFacts => ({
  pin: {
    suite_hash: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
    template_hash: 'f0e1d2c3b4a5968778695a4b3c2d1e0f',
    scenarios: {},
  },
  sides: {
    base: { ref: 'main', sha: '1234567890abcdef1234567890abcdef12345678' },
    head: { ref: 'feature/lean-prompt', sha: 'fedcba0987654321fedcba0987654321fedcba09' },
  },
  engine: 'postgres',
  engineReason: 'database.url is set',
  repeats: 5,
  startedAt: '2025-01-01T00:00:00.000Z',
  durationMs: 42_000,
  ...o,
});

const order = (refunds: number) => ({ id: 'ORD-1001', refund_count: refunds, refunded_amount: refunds * 40 });
const lookup = () => call('lookup_order', { order_id: 'ORD-1001' });
const policy = () => call('get_refund_policy', { order_id: 'ORD-1001' });
const refund = (o: Parameters<typeof call>[2] = {}) =>
  call('refund_payment', { amount: 40, order_id: 'ORD-1001' }, { mutated: true, ...o });

/** The refund timeout case: the head refunds twice after a timeout, in 2 of 5 repeats. */
export function timeoutCase(id = 'refund-timeout-after-mutation'): CaseInput {
  const s = scenario(
    id,
    [
      { id: 'refunded-exactly-once', critical: true },
      { id: 'policy-before-refund', critical: false },
    ],
    'The provider applies the refund, then times out.',
  );
  const once = stateDiff(tableDiff('orders', ['id'], [[{ id: 'ORD-1001' }, order(0), order(1)]]));
  const twice = stateDiff(tableDiff('orders', ['id'], [[{ id: 'ORD-1001' }, order(0), order(2)]]));
  const good = {
    calls: [lookup(), policy(), refund({ status: 504, fault: 'timeout_after_mutation' }), lookup()],
    diff: once,
    usage: { cost_usd: 0.01, input_tokens: 900, output_tokens: 80 },
  };
  const bad = {
    calls: [lookup(), refund({ status: 504, fault: 'timeout_after_mutation' }), refund()],
    diff: twice,
    verdicts: { 'refunded-exactly-once': 'fail' as const, 'policy-before-refund': 'fail' as const },
    labels: {
      'refunded-exactly-once': 'STATE_MISMATCH' as const,
      'policy-before-refund': 'ORDER_VIOLATION' as const,
    },
    messages: {
      'refunded-exactly-once': 'expected refund_count = 1, got 2',
      'policy-before-refund': 'refund_payment was called before get_refund_policy',
    },
  };
  return {
    scenario: s,
    base: repeats(s, 'base', [good, good, good, good, good]),
    head: repeats(s, 'head', [bad, { ...good }, bad, good, good]),
  };
}

export function regressedCase(id = 'email-after-refund'): CaseInput {
  const s = scenario(id, [{ id: 'email-sent', critical: false }]);
  return {
    scenario: s,
    base: passing(s, 'base', 5),
    head: repeats(s, 'head', [{ verdicts: { 'email-sent': 'fail' } }, {}, {}, {}, {}]),
  };
}

export function improvedCase(id = 'escalate-large-refund'): CaseInput {
  const s = scenario(id, [{ id: 'escalated', critical: true }]);
  return {
    scenario: s,
    base: repeats(s, 'base', [{ verdicts: { escalated: 'fail' } }, {}, {}, {}, {}]),
    head: passing(s, 'head', 5),
  };
}

export function incompleteCase(id = 'judge-politeness'): CaseInput {
  // The judge, not the agent, failed to grade a reply: the harness's error.
  const s = scenario(id, [
    { id: 'polite', critical: false, judge: { criterion: 'The reply is polite.', threshold: 0.5 } },
  ]);
  return {
    scenario: s,
    base: passing(s, 'base', 5),
    head: repeats(s, 'head', [
      { verdicts: { polite: 'error' }, messages: { polite: 'the judge did not answer within 30s' } },
      {},
      {},
      {},
      {},
    ]),
  };
}

export function unchangedCase(id: string): CaseInput {
  const s = scenario(id, [{ id: 'ok', critical: true }]);
  return { scenario: s, base: passing(s, 'base', 5), head: passing(s, 'head', 5) };
}

/** A report with one case of every class. */
export function sampleReport(o: Partial<ReportFacts> = {}): Report {
  return compareSuite({
    ...facts(o),
    cases: [
      timeoutCase(),
      regressedCase(),
      improvedCase(),
      incompleteCase(),
      unchangedCase('lookup-only'),
      unchangedCase('happy-path'),
    ],
  });
}

/** A head that crashes: exit 1 with a Python traceback on stderr and nothing on stdout; the base passes. */
export function crashCase(id = 'refund-crash'): CaseInput {
  const s = scenario(id, [{ id: 'refunded', critical: true }]);
  const traceback = [
    'Traceback (most recent call last):',
    '  File "agent.py", line 88, in <module>',
    '    main()',
    '  File "agent.py", line 41, in main',
    "    status = order['state']",
    "KeyError: 'state'",
  ].join('\n');
  const crashed = {
    calls: [lookup()],
    verdicts: { completed: 'fail' as const, refunded: 'fail' as const },
    labels: { completed: 'INCOMPLETE_RUN' as const },
    messages: {
      completed:
        'expected the agent to exit 0, but it exited with code 1: stdout is empty: the agent printed no result',
    },
    agent: {
      exitCode: 1,
      stderr: `${traceback}\n`,
      result: undefined,
      resultError: 'stdout is empty: the agent printed no result',
    },
  };
  return {
    scenario: s,
    base: repeats(s, 'base', [{ calls: [lookup(), refund()] }, { calls: [lookup(), refund()] }]),
    head: repeats(s, 'head', [crashed, crashed]),
  };
}

/** A case that fails on both sides the same way, with an agent that reports no usage. */
export function stillFailingCase(id = 'partial-refund'): CaseInput {
  const s = scenario(id, [{ id: 'partial-amount', critical: false }]);
  const wrong = {
    verdicts: { 'partial-amount': 'fail' as const },
    messages: { 'partial-amount': 'orders[ORD-1001].refunded_amount: expected 20, got 40' },
  };
  return { scenario: s, base: repeats(s, 'base', [wrong, wrong]), head: repeats(s, 'head', [wrong, wrong]) };
}

/**
 * The cases of the golden sample: one of every class, a crash and a case still failing. Calls are
 * numbered within each episode, as the gateway numbers them, so the sample is the same however many
 * calls other code built before it.
 */
export function goldenSampleCases(): CaseInput[] {
  const cases = [
    timeoutCase(),
    regressedCase(),
    improvedCase(),
    incompleteCase(),
    crashCase(),
    stillFailingCase(),
    unchangedCase('lookup-only'),
    unchangedCase('happy-path'),
  ];
  for (const c of cases)
    for (const e of [...(c.base ?? []), ...c.head])
      for (const [i, call] of e.record.calls.entries()) call.seq = i + 1;
  return cases;
}

/** The sample of the golden outputs. */
export function goldenSampleReport(): Report {
  return compareSuite({ ...facts(), cases: goldenSampleCases() });
}

/** The episodes of the golden sample, as its episodes.jsonl would hold them. */
export function goldenSampleEpisodes(): GradedEpisode[] {
  return goldenSampleCases().flatMap((c) => [...(c.base ?? []), ...c.head]);
}
