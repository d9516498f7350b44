// `judge: {criterion, threshold}`: an LLM judge says pass with a score at or above the threshold. The
// harness asks the judge before grading (judge/); a judge that is down, slow or unparsable gives
// an error, never a score.
import { z } from 'zod';
import { defineKind, type JudgeResult } from '../kind.js';
import { AT_LEAST, EXACT, fields } from '../params.js';
import { errored, failed, type Grade, passed } from '../verdicts.js';

export type { JudgeResult };

/** The score a judge verdict needs when a criterion gives no threshold. */
export const JUDGE_THRESHOLD_DEFAULT = 0.7;

const FIELDS = {
  judge: z.strictObject({
    criterion: z.string().min(1),
    threshold: z.number().min(0).max(1).default(JUDGE_THRESHOLD_DEFAULT),
  }),
};

/** `judge`: the judge passed the criterion with a score at or above the threshold; no judge, no grade. */
export function gradeJudge(spec: z.infer<typeof FIELDS.judge>, result: JudgeResult | undefined): Grade {
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

export const judge = defineKind({
  key: 'judge',
  fields: FIELDS,
  evidence: 'claims',
  params: { judge: fields({ criterion: EXACT, threshold: AT_LEAST }) },
  grade: (e, _record, ctx) => gradeJudge(e.judge, ctx.judge),
});
