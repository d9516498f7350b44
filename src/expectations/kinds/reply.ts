// `reply_contains`, `reply_not_contains` and `reply_matches`: on the agent's reply text. Three kinds
// declared together: they read the same text and differ only in the test.
import { z } from 'zod';
import type { AgentRun, EpisodeRecord } from '../../model/episode.js';
import { agentTexts } from '../conversation.js';
import { defineKind } from '../kind.js';
import { EXACT, ordered } from '../params.js';
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

/** Which agent turns a reply expectation reads in a conversation; a single reply is all of them. */
export const REPLY_TURNS = ['any', 'final', 'all'] as const;
export type ReplyTurn = (typeof REPLY_TURNS)[number];

// Optional rather than defaulted: a scenario without it keeps the content hash it had.
const TURN = z
  .enum(REPLY_TURNS)
  .optional()
  .describe('In a conversation: the last agent turn (final), at least one (any), or every one (all).');

// `all` holds only if `final` does, and `final` only if `any` does: the levels from loosest to strictest.
const TURN_PARAM = ordered(REPLY_TURNS, 'final');

/**
 * A reply expectation on an episode: on its one reply, or in a conversation on the agent turns
 * `turn` names, each graded as a reply of its own.
 */
export function gradeReplyTurns(
  kind: ReplyKind,
  expected: string,
  turn: ReplyTurn = 'final',
  record: EpisodeRecord,
): Grade {
  if (!record.conversation) return gradeReply(kind, expected, record.agent);
  const texts = agentTexts(record) ?? [];
  if (texts.length === 0) {
    return failed(
      'REPLY_MISMATCH',
      'the agent took no turn in the conversation, so there is no reply to check',
      expected,
      null,
    );
  }
  const asReply = (reply: string): AgentRun => ({ ...record.agent, result: { reply } });
  if (turn === 'final') return gradeReply(kind, expected, asReply(texts[texts.length - 1]));
  const grades = texts.map((text) => gradeReply(kind, expected, asReply(text)));
  const errorAt = grades.find((g) => g.verdict === 'error');
  if (errorAt) return errorAt;
  if (turn === 'any') {
    const hit = grades.findIndex((g) => g.verdict === 'pass');
    if (hit >= 0) return { ...grades[hit], message: `agent turn ${hit + 1}: ${grades[hit].message}` };
    return failed(
      'REPLY_MISMATCH',
      `no agent turn of ${texts.length}: ${grades[grades.length - 1].message}`,
      expected,
      texts,
    );
  }
  const miss = grades.findIndex((g) => g.verdict !== 'pass');
  if (miss >= 0) return { ...grades[miss], message: `agent turn ${miss + 1}: ${grades[miss].message}` };
  return passed(
    `every agent turn (${texts.length}): ${grades[grades.length - 1].message.replace(/^the reply /, 'the reply ')}`,
    expected,
    texts,
  );
}

export const replyContains = defineKind({
  key: 'reply_contains',
  fields: { reply_contains: z.string(), turn: TURN },
  evidence: 'claims',
  params: { reply_contains: EXACT, turn: TURN_PARAM },
  grade: (e, record) => gradeReplyTurns('reply_contains', e.reply_contains, e.turn, record),
});

export const replyNotContains = defineKind({
  key: 'reply_not_contains',
  fields: { reply_not_contains: z.string(), turn: TURN },
  evidence: 'claims',
  params: { reply_not_contains: EXACT, turn: TURN_PARAM },
  grade: (e, record) => gradeReplyTurns('reply_not_contains', e.reply_not_contains, e.turn, record),
});

export const replyMatches = defineKind({
  key: 'reply_matches',
  fields: { reply_matches: z.string(), turn: TURN },
  evidence: 'claims',
  params: { reply_matches: EXACT, turn: TURN_PARAM },
  grade: (e, record) => gradeReplyTurns('reply_matches', e.reply_matches, e.turn, record),
  check: (e) => patternProblems(e.reply_matches, ['reply_matches']),
});
