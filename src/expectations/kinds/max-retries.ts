// `max_retries: n`: at most n retries over all tools; a retry is a call whose previous call of the
// same tool had the same canonical arguments and failed.
import { z } from 'zod';
import type { CallRecord } from '../../model/episode.js';
import { countByTool, retriesOf } from '../call-log.js';
import { defineKind } from '../kind.js';
import { AT_MOST } from '../params.js';
import { failed, type Grade, passed, plural } from '../verdicts.js';

/** `max_retries`: at most n retries over all tools. */
export function gradeMaxRetries(max: number, calls: CallRecord[]): Grade {
  const retries = retriesOf(calls);
  if (retries.length <= max) {
    return passed(
      `${plural(retries.length, 'retry', 'retries')}, within the limit of ${max}`,
      max,
      retries.length,
    );
  }
  return failed(
    'TOO_MANY_RETRIES',
    `expected at most ${plural(max, 'retry', 'retries')}, got ${retries.length} (${countByTool(retries)})`,
    max,
    retries.length,
  );
}

export const maxRetries = defineKind({
  key: 'max_retries',
  fields: { max_retries: z.number().int().min(0) },
  evidence: 'calls',
  params: { max_retries: AT_MOST },
  grade: (e, record) => gradeMaxRetries(e.max_retries, record.calls),
});
