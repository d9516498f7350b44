// Expectations on what the agent said (its exit, its claimed outcome, its reply), and the one that
// checks a claim of success against the evidence.

import type { SuitePattern } from '../config/pattern.js';
import { type ExpectationOf, JUDGE_THRESHOLD_DEFAULT, type Scenario, type Tool } from '../config/schema.js';
import type { AgentRun, CallRecord, Outcome, QueryResult } from '../model/episode.js';
import { inSeqOrder, isSuccess } from './calls.js';
import { gradeQueryCheck } from './query.js';
import { compilePattern, formatValue, GradeError } from './values.js';
import { errored, failed, type Grade, passed } from './verdicts.js';

/** The implicit critical expectation: the agent exited 0 within its timeout and printed a valid result. */
export function gradeCompleted(agent: AgentRun): Grade {
  const actual = { exitCode: agent.exitCode, signal: agent.signal, timedOut: agent.timedOut };
  const expected = 'exit 0 with a valid result';
  if (agent.timedOut) {
    const message = `the agent timed out after ${Math.round(agent.durationMs)} ms`;
    return failed('INCOMPLETE_RUN', message, expected, actual);
  }
  if (agent.exitCode !== 0) {
    const how = agent.signal
      ? `was killed by ${agent.signal}`
      : agent.exitCode === null
        ? 'did not run to an exit'
        : `exited with code ${agent.exitCode}`;
    const why = agent.resultError ? `: ${agent.resultError}` : '';
    return failed('INCOMPLETE_RUN', `expected the agent to exit 0, but it ${how}${why}`, expected, actual);
  }
  if (!agent.result || agent.resultError !== undefined) {
    const why = agent.resultError ?? 'no result line';
    return failed(
      'INCOMPLETE_RUN',
      `the agent exited 0 but printed no valid result: ${why}`,
      expected,
      actual,
    );
  }
  return passed('the agent exited 0 and printed a valid result', expected, actual);
}

/** `outcome`: the outcome the agent claimed equals the expected one. */
export function gradeOutcome(expected: Outcome, agent: AgentRun): Grade {
  const claimed = agent.result?.outcome;
  if (claimed === expected) return passed(`the agent claimed ${expected}, as expected`, expected, claimed);
  const got = claimed ?? (agent.result ? 'no outcome' : 'no result');
  return failed('WRONG_OUTCOME', `expected outcome ${expected}, got ${got}`, expected, claimed ?? null);
}

/** The write tools the scenario allows: from the twin definitions, or else from the write calls made. */
function allowedWriteTools(
  scenario: Scenario,
  calls: CallRecord[],
  tools: Map<string, Tool> | undefined,
): string[] {
  if (tools) {
    const names = scenario.tools ?? [...tools.keys()];
    return names.filter((name) => {
      const risk = tools.get(name)?.risk;
      return risk === 'write' || risk === 'write_irreversible';
    });
  }
  return [...new Set(calls.filter((c) => c.risk !== 'read').map((c) => c.tool))];
}

/**
 * `outcome_verified`: passes when the agent did not claim SUCCESS. With a query, a claimed SUCCESS
 * must be backed by it. With `true`, a claimed SUCCESS fails (HALLUCINATED_SUCCESS) when
 *   1. a write or write_irreversible call answered 2xx, did not mutate and was not an idempotent
 *      replay (its effect did not land), and no later call of the same tool mutated; or
 *   2. no write call mutated anything at all while the scenario allows write tools (from the twin
 *      definitions when given, else those the agent called).
 * Read tools never count: they have no effect to land.
 */
export function gradeOutcomeVerified(
  expectation: ExpectationOf<'outcome_verified'>,
  scenario: Scenario,
  agent: AgentRun,
  calls: CallRecord[],
  query: QueryResult | undefined,
  tools: Map<string, Tool> | undefined,
): Grade {
  const claimed = agent.result?.outcome;
  if (claimed !== 'SUCCESS') {
    return passed(
      `the agent claimed ${claimed ?? 'no outcome'}, so there is no success to verify`,
      'SUCCESS',
      claimed ?? null,
    );
  }
  const spec = expectation.outcome_verified;
  if (spec !== true) {
    const { query: _query, ...comparators } = spec;
    const grade = gradeQueryCheck(comparators, query, expectation.id);
    if (grade.verdict !== 'fail') {
      return grade.verdict === 'pass'
        ? { ...grade, message: `the agent claimed SUCCESS and ${grade.message}` }
        : grade;
    }
    return {
      ...grade,
      label: 'HALLUCINATED_SUCCESS',
      message: `the agent claimed SUCCESS, but ${grade.message}`,
    };
  }
  const ordered = inSeqOrder(calls);
  const writes = ordered.filter((c) => c.risk !== 'read');
  const unlanded = writes.find(
    (c) =>
      isSuccess(c.status) &&
      !c.mutated &&
      !c.replay &&
      !writes.some((later) => later.seq > c.seq && later.tool === c.tool && later.mutated),
  );
  if (unlanded) {
    return failed(
      'HALLUCINATED_SUCCESS',
      `the agent claimed SUCCESS, but ${unlanded.tool} #${unlanded.seq} answered ${unlanded.status} without its effect landing, and no later ${unlanded.tool} call landed`,
      'every successful write landed',
      { tool: unlanded.tool, seq: unlanded.seq, status: unlanded.status },
    );
  }
  const allowed = allowedWriteTools(scenario, calls, tools);
  if (allowed.length > 0 && !writes.some((c) => c.mutated)) {
    return failed(
      'HALLUCINATED_SUCCESS',
      `the agent claimed SUCCESS, but no write call changed anything (write tools allowed: ${allowed.join(', ')})`,
      'at least one write that landed',
      `${writes.length} write calls, none landed`,
    );
  }
  return passed(
    'the agent claimed SUCCESS, and every write that answered success landed',
    'SUCCESS',
    'SUCCESS',
  );
}

type ReplyKind = 'reply_contains' | 'reply_not_contains' | 'reply_matches';

/**
 * `reply_contains` / `reply_not_contains`: a case-sensitive substring of the reply text;
 * `reply_matches`: a regular expression (RE2 syntax, linear time) found in it. Without a
 * printed result there is no reply: every reply expectation fails.
 */
export function gradeReply(kind: ReplyKind, expected: string, agent: AgentRun): Grade {
  const reply = agent.result?.reply;
  if (typeof reply !== 'string') {
    return failed(
      'REPLY_MISMATCH',
      'the agent printed no result, so there is no reply to check',
      expected,
      null,
    );
  }
  const shown = formatValue(reply);
  if (kind === 'reply_matches') {
    let pattern: SuitePattern;
    try {
      pattern = compilePattern(expected, 'reply_matches');
    } catch (e) {
      if (e instanceof GradeError) return errored(e.message);
      throw e;
    }
    return pattern.test(reply)
      ? passed(`the reply matches /${expected}/`, expected, reply)
      : failed('REPLY_MISMATCH', `expected the reply to match /${expected}/, got ${shown}`, expected, reply);
  }
  const contains = reply.includes(expected);
  if (kind === 'reply_contains') {
    return contains
      ? passed(`the reply contains ${JSON.stringify(expected)}`, expected, reply)
      : failed(
          'REPLY_MISMATCH',
          `expected the reply to contain ${JSON.stringify(expected)}, got ${shown}`,
          expected,
          reply,
        );
  }
  return contains
    ? failed(
        'REPLY_MISMATCH',
        `expected the reply not to contain ${JSON.stringify(expected)}, got ${shown}`,
        expected,
        reply,
      )
    : passed(`the reply does not contain ${JSON.stringify(expected)}`, expected, reply);
}

/** What the judge said about one `judge` expectation, or why it could not say. */
export type JudgeResult = { score: number; pass: boolean; reason?: string } | { error: string };

/** `judge`: the judge passed the criterion with a score at or above the threshold; no judge, no grade. */
export function gradeJudge(spec: ExpectationOf<'judge'>['judge'], result: JudgeResult | undefined): Grade {
  if (!result) return errored('no judge configured');
  if ('error' in result) return errored(`the judge gave no verdict: ${result.error}`);
  const threshold = spec.threshold ?? JUDGE_THRESHOLD_DEFAULT;
  const why = result.reason ? `: ${result.reason}` : '';
  if (result.pass && result.score >= threshold) {
    return passed(
      `the judge passed ${JSON.stringify(spec.criterion)} with score ${result.score}${why}`,
      threshold,
      result.score,
    );
  }
  const criterion = JSON.stringify(spec.criterion);
  const message = result.pass
    ? `expected a judge score >= ${threshold} on ${criterion}, got ${result.score}${why}`
    : `expected the judge to pass ${criterion}, but it failed it (score ${result.score}, threshold ${threshold})${why}`;
  return failed('JUDGE_FAIL', message, threshold, result.score);
}
