// `tool_not_called: tool`: the gateway recorded no call of the tool.
import { z } from 'zod';
import type { CallRecord } from '../../model/episode.js';
import { inSeqOrder, seqs } from '../call-log.js';
import { defineKind } from '../kind.js';
import { EXACT } from '../params.js';
import { failed, type Grade, passed, plural } from '../verdicts.js';

/** `tool_not_called`: the gateway recorded no call of the tool. */
export function gradeToolNotCalled(tool: string, calls: CallRecord[]): Grade {
  const made = inSeqOrder(calls).filter((c) => c.tool === tool);
  if (made.length === 0) return passed(`${tool} was never called`, 0, 0);
  return failed(
    'FORBIDDEN_CALL',
    `expected ${tool} never called, got ${plural(made.length, 'call')} (${seqs(made)})`,
    0,
    made.length,
  );
}

export const toolNotCalled = defineKind({
  key: 'tool_not_called',
  fields: { tool_not_called: z.string().min(1) },
  evidence: 'calls',
  params: { tool_not_called: EXACT },
  tools: [['tool_not_called']],
  grade: (e, record) => gradeToolNotCalled(e.tool_not_called, record.calls),
});
