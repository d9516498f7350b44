// `reply_contains`, `reply_not_contains` and `reply_matches`: on the agent's reply text. Three kinds
// declared together: they read the same text and differ only in the test.
import { z } from 'zod';
import type { AgentRun } from '../../model/episode.js';
import { defineKind } from '../kind.js';
import { EXACT } from '../params.js';
import type { SuitePattern } from '../pattern.js';
import { patternProblems } from '../query-check.js';
import { compilePattern, formatValue, GradeError } from '../values.js';
import { errored, failed, type Grade, passed } from '../verdicts.js';

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

export const replyContains = defineKind({
  key: 'reply_contains',
  fields: { reply_contains: z.string() },
  evidence: 'claims',
  params: { reply_contains: EXACT },
  grade: (e, record) => gradeReply('reply_contains', e.reply_contains, record.agent),
});

export const replyNotContains = defineKind({
  key: 'reply_not_contains',
  fields: { reply_not_contains: z.string() },
  evidence: 'claims',
  params: { reply_not_contains: EXACT },
  grade: (e, record) => gradeReply('reply_not_contains', e.reply_not_contains, record.agent),
});

export const replyMatches = defineKind({
  key: 'reply_matches',
  fields: { reply_matches: z.string() },
  evidence: 'claims',
  params: { reply_matches: EXACT },
  grade: (e, record) => gradeReply('reply_matches', e.reply_matches, record.agent),
  check: (e) => patternProblems(e.reply_matches, ['reply_matches']),
});
