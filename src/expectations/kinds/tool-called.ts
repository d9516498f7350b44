// `tool_called: {tool, min, max, args}`: the tool's calls (with those arguments, when given) number
// between min and max, counted on the gateway's record.
import { z } from 'zod';
import type { CallRecord } from '../../model/episode.js';
import { argsInclude, describeArgs, seqs } from '../call-log.js';
import { defineKind } from '../kind.js';
import { AT_LEAST, AT_MOST, EXACT, fields, filter } from '../params.js';
import { failed, type Grade, passed, plural } from '../verdicts.js';

const FIELDS = {
  tool_called: z.strictObject({
    tool: z.string().min(1),
    min: z.number().int().min(0).default(1),
    max: z.number().int().min(0).optional(),
    args: z.record(z.string(), z.unknown()).optional(),
  }),
};
type Spec = z.infer<typeof FIELDS.tool_called>;

/** `tool_called`: the tool's calls (with those arguments, when given) number between min and max. */
export function gradeToolCalled(spec: Spec, calls: CallRecord[]): Grade {
  const min = spec.min ?? 1;
  const matching = calls.filter((c) => c.tool === spec.tool && (!spec.args || argsInclude(c, spec.args)));
  const range =
    spec.max === undefined
      ? `at least ${plural(min, 'time')}`
      : spec.max === min
        ? `exactly ${plural(min, 'time')}`
        : `between ${min} and ${plural(spec.max, 'time')}`;
  const wanted = `${spec.tool} called ${range}${describeArgs(spec.args)}`;
  const got = `${matching.length}${matching.length ? ` (${seqs(matching)})` : ''}`;
  const expected = { min, ...(spec.max === undefined ? {} : { max: spec.max }) };
  if (matching.length < min) {
    return failed('MISSING_EFFECT', `expected ${wanted}, got ${got}`, expected, matching.length);
  }
  if (spec.max !== undefined && matching.length > spec.max) {
    return failed('TOO_MANY_CALLS', `expected ${wanted}, got ${got}`, expected, matching.length);
  }
  return passed(
    `${spec.tool} was called ${plural(matching.length, 'time')}${describeArgs(spec.args)}`,
    expected,
    matching.length,
  );
}

export const toolCalled = defineKind({
  key: 'tool_called',
  fields: FIELDS,
  evidence: 'calls',
  // An args filter counts fewer calls: `min` on them still proves `min` on all, `max` does not.
  params: {
    tool_called: fields({ tool: EXACT, min: AT_LEAST, max: AT_MOST, args: filter(['min', 'max'], 'calls') }),
  },
  tools: [['tool_called', 'tool']],
  grade: (e, record) => gradeToolCalled(e.tool_called, record.calls),
  check: ({ tool_called: { min, max } }) =>
    max !== undefined && min > max
      ? [{ at: ['tool_called', 'max'], message: `max (${max}) is less than min (${min})` }]
      : [],
});
