// `max_tool_calls: n`: the gateway recorded at most n calls.
import { z } from 'zod';
import type { CallRecord } from '../../model/episode.js';
import { countByTool } from '../call-log.js';
import { defineKind } from '../kind.js';
import { AT_MOST } from '../params.js';
import { failed, type Grade, passed, plural } from '../verdicts.js';

/** `max_tool_calls`: the gateway recorded at most n calls. */
export function gradeMaxToolCalls(max: number, calls: CallRecord[]): Grade {
  if (calls.length <= max) {
    return passed(`${plural(calls.length, 'call')}, within the limit of ${max}`, max, calls.length);
  }
  const byTool = countByTool(calls);
  return failed(
    'TOO_MANY_CALLS',
    `expected at most ${plural(max, 'call')}, got ${calls.length} (${byTool})`,
    max,
    calls.length,
  );
}

export const maxToolCalls = defineKind({
  key: 'max_tool_calls',
  fields: { max_tool_calls: z.number().int().min(0) },
  evidence: 'calls',
  params: { max_tool_calls: AT_MOST },
  grade: (e, record) => gradeMaxToolCalls(e.max_tool_calls, record.calls),
});
