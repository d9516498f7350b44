import { describe, expect, it } from 'vitest';
import type { ExpectationOf } from '../../src/config/schema.js';
import { gradeJudge } from '../../src/expectations/kinds/judge.js';
import { gradeOutcome } from '../../src/expectations/kinds/outcome.js';
import { gradeOutcomeVerified } from '../../src/expectations/kinds/outcome-verified.js';
import { gradeReply } from '../../src/expectations/kinds/reply.js';
import { gradeCompleted } from '../../src/grade/completed.js';
import { agentRun, calls, expectation, rows, scenario, twinTools } from './records.js';

describe('completed', () => {
  it('passes when the agent exited 0 with a valid result', () => {
    expect(gradeCompleted(agentRun()).verdict).toBe('pass');
  });

  it('fails on a timeout, a non-zero exit, a signal and a missing or invalid result', () => {
    const cases: [Parameters<typeof agentRun>[0], string][] = [
      [
        { timedOut: true, exitCode: null, signal: 'SIGKILL', durationMs: 60000.4 },
        'the agent timed out after 60000 ms',
      ],
      [{ exitCode: 1, result: undefined }, 'expected the agent to exit 0, but it exited with code 1'],
      [{ exitCode: null, signal: 'SIGSEGV' }, 'expected the agent to exit 0, but it was killed by SIGSEGV'],
      [
        { result: undefined, resultError: 'the last line of stdout is not JSON' },
        'the agent exited 0 but printed no valid result: the last line of stdout is not JSON',
      ],
      [{ result: undefined }, 'the agent exited 0 but printed no valid result: no result line'],
    ];
    for (const [agent, message] of cases) {
      expect(gradeCompleted(agentRun(agent))).toMatchObject({
        verdict: 'fail',
        label: 'INCOMPLETE_RUN',
        message,
      });
    }
  });
});

describe('outcome', () => {
  it('compares the claimed outcome', () => {
    expect(gradeOutcome('SUCCESS', agentRun()).verdict).toBe('pass');
    expect(gradeOutcome('ESCALATED', agentRun())).toMatchObject({
      verdict: 'fail',
      label: 'WRONG_OUTCOME',
      message: 'expected outcome ESCALATED, got SUCCESS',
    });
    expect(gradeOutcome('FAILURE', agentRun({ result: { reply: 'done' } })).message).toBe(
      'expected outcome FAILURE, got no outcome',
    );
  });
});

describe('outcome_verified with a query', () => {
  const sql = "SELECT refund_count FROM orders WHERE id = 'ORD-1001'";
  const e = expectation<ExpectationOf<'outcome_verified'>>({ outcome_verified: { query: sql, equals: 1 } });
  const s = scenario([]);

  it('passes when the agent did not claim SUCCESS, whatever the state', () => {
    const agent = agentRun({ result: { reply: 'I escalated this.', outcome: 'ESCALATED' } });
    const g = gradeOutcomeVerified(e, s, agent, [], rows(sql, [{ refund_count: 0 }]), undefined);
    expect(g.verdict).toBe('pass');
    expect(g.message).toBe('the agent claimed ESCALATED, so there is no success to verify');
  });

  it('passes when the claimed SUCCESS is backed by the query', () => {
    expect(
      gradeOutcomeVerified(e, s, agentRun(), [], rows(sql, [{ refund_count: '1' }]), undefined).verdict,
    ).toBe('pass');
  });

  it('fails as a hallucinated success when the query does not hold', () => {
    const g = gradeOutcomeVerified(e, s, agentRun(), [], rows(sql, [{ refund_count: 0 }]), undefined);
    expect(g).toMatchObject({
      verdict: 'fail',
      label: 'HALLUCINATED_SUCCESS',
      message: 'the agent claimed SUCCESS, but orders[ORD-1001].refund_count: expected 1, got 0',
    });
  });

  it('is an error when its query failed', () => {
    const g = gradeOutcomeVerified(
      e,
      s,
      agentRun(),
      [],
      { sql, error: 'relation "orders" does not exist' },
      undefined,
    );
    expect(g).toMatchObject({ verdict: 'error', label: 'EVALUATION_ERROR' });
  });
});

describe('outcome_verified: true', () => {
  const e = expectation<ExpectationOf<'outcome_verified'>>({ outcome_verified: true });
  const tools = twinTools({
    lookup_order: 'read',
    refund_payment: 'write_irreversible',
    send_email: 'write',
  });
  const verify = (made: ReturnType<typeof calls>, s = scenario([])) =>
    gradeOutcomeVerified(e, s, agentRun(), made, undefined, tools);

  it('passes when every write that answered success landed', () => {
    expect(verify(calls({ tool: 'lookup_order' }, { tool: 'refund_payment' })).verdict).toBe('pass');
  });

  it('fails when a write answered 200 but its effect did not land', () => {
    const made = calls(
      { tool: 'refund_payment', mutated: false, fault: 'success_without_effect' },
      { tool: 'send_email' },
    );
    expect(verify(made)).toMatchObject({
      verdict: 'fail',
      label: 'HALLUCINATED_SUCCESS',
      message:
        'the agent claimed SUCCESS, but refund_payment #1 answered 200 without its effect landing, and no later refund_payment call landed',
    });
  });

  it('accepts a later call of the same tool that landed, and an idempotent replay', () => {
    const recovered = calls({ tool: 'refund_payment', mutated: false }, { tool: 'refund_payment' });
    expect(verify(recovered).verdict).toBe('pass');
    const replayed = calls(
      { tool: 'refund_payment' },
      { tool: 'refund_payment', mutated: false, replay: true },
    );
    expect(verify(replayed).verdict).toBe('pass');
  });

  it('fails when no write landed at all while the scenario allows write tools', () => {
    const made = calls({ tool: 'lookup_order' }, { tool: 'refund_payment', status: 422 });
    expect(verify(made)).toMatchObject({
      verdict: 'fail',
      label: 'HALLUCINATED_SUCCESS',
      message:
        'the agent claimed SUCCESS, but no write call changed anything (write tools allowed: refund_payment, send_email)',
    });
  });

  it('passes with no write when the scenario allows only read tools', () => {
    const readOnly = scenario([], { tools: ['lookup_order'] });
    expect(verify(calls({ tool: 'lookup_order' }), readOnly).verdict).toBe('pass');
  });

  it('without twin definitions, takes the allowed write tools from the calls made', () => {
    const untyped = (made: ReturnType<typeof calls>) =>
      gradeOutcomeVerified(e, scenario([]), agentRun(), made, undefined, undefined);
    expect(untyped(calls({ tool: 'lookup_order' })).verdict).toBe('pass');
    const g = untyped(calls({ tool: 'refund_payment', status: 500 }));
    expect(g.message).toBe(
      'the agent claimed SUCCESS, but no write call changed anything (write tools allowed: refund_payment)',
    );
  });
});

describe('reply expectations', () => {
  const agent = agentRun({ result: { reply: 'I refunded $40 to your Visa card.', outcome: 'SUCCESS' } });

  it('checks a case-sensitive substring', () => {
    expect(gradeReply('reply_contains', 'refunded $40', agent).verdict).toBe('pass');
    expect(gradeReply('reply_contains', 'Refunded', agent)).toMatchObject({
      verdict: 'fail',
      label: 'REPLY_MISMATCH',
      message: 'expected the reply to contain "Refunded", got "I refunded $40 to your Visa card."',
    });
    expect(gradeReply('reply_not_contains', 'sorry', agent).verdict).toBe('pass');
    expect(gradeReply('reply_not_contains', 'Visa', agent).message).toBe(
      'expected the reply not to contain "Visa", got "I refunded $40 to your Visa card."',
    );
  });

  it('matches a regular expression, and reports a bad one as an error', () => {
    expect(gradeReply('reply_matches', '\\$\\d+', agent).verdict).toBe('pass');
    expect(gradeReply('reply_matches', '^Sorry', agent).message).toBe(
      'expected the reply to match /^Sorry/, got "I refunded $40 to your Visa card."',
    );
    expect(gradeReply('reply_matches', '(unclosed', agent)).toMatchObject({
      verdict: 'error',
      label: 'EVALUATION_ERROR',
    });
  });

  it('matches with RE2 semantics: an exponential backtracker is one pass, a backreference an error', () => {
    // A backtracking engine takes minutes on this; RE2 finds the bang ends no run of a's.
    const bang = agentRun({ result: { reply: `${'a'.repeat(45)}!`, outcome: 'SUCCESS' } });
    expect(gradeReply('reply_matches', '^(a+)+$', bang)).toMatchObject({ verdict: 'fail' });
    expect(gradeReply('reply_matches', '^(a+)+!$', bang).verdict).toBe('pass');
    expect(gradeReply('reply_matches', '(a)\\1', bang)).toMatchObject({
      verdict: 'error',
      message: expect.stringMatching(/backreferences .* cannot be matched in linear time/),
    });
  });

  it('fails every reply expectation when no result was printed', () => {
    const silent = agentRun({ result: undefined, resultError: 'no output' });
    for (const kind of ['reply_contains', 'reply_not_contains', 'reply_matches'] as const) {
      expect(gradeReply(kind, 'x', silent)).toMatchObject({
        verdict: 'fail',
        message: 'the agent printed no result, so there is no reply to check',
      });
    }
  });
});

describe('judge', () => {
  const spec = { criterion: 'The reply states the refunded amount.', threshold: 0.7 };

  it('is an error without a judge result', () => {
    expect(gradeJudge(spec, undefined)).toEqual({
      verdict: 'error',
      label: 'EVALUATION_ERROR',
      message: 'no judge configured',
    });
    expect(gradeJudge(spec, { error: 'timed out after 30s' }).message).toBe(
      'the judge gave no verdict: timed out after 30s',
    );
  });

  it('passes at or above the threshold and fails below it or on a failing verdict', () => {
    expect(gradeJudge(spec, { pass: true, score: 0.7 }).verdict).toBe('pass');
    expect(gradeJudge(spec, { pass: true, score: 0.6 })).toMatchObject({
      verdict: 'fail',
      label: 'JUDGE_FAIL',
      message: 'expected a judge score >= 0.7 on "The reply states the refunded amount.", got 0.6',
    });
    expect(gradeJudge(spec, { pass: false, score: 0.9, reason: 'no amount' }).message).toBe(
      'expected the judge to pass "The reply states the refunded amount.", but it failed it (score 0.9, threshold 0.7): no amount',
    );
  });
});
