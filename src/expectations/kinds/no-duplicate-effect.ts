// `no_duplicate_effect: tool`: no two calls of the tool applied the same effect; idempotent replays
// do not count.
import { z } from 'zod';
import type { CallRecord } from '../../model/episode.js';
import { effectOf, inSeqOrder } from '../call-log.js';
import { defineKind } from '../kind.js';
import { EXACT } from '../params.js';
import { failed, type Grade, passed, plural } from '../verdicts.js';

/**
 * `no_duplicate_effect`: among the tool's calls that changed the database (mutated, not an
 * idempotent replay), no two applied the same effect. A call that timed out after mutating counts:
 * the effect landed even though the caller saw 504, so a blind retry that lands again is a duplicate.
 */
export function gradeNoDuplicateEffect(tool: string, calls: CallRecord[]): Grade {
  const applied = new Map<string, CallRecord[]>();
  for (const call of inSeqOrder(calls)) {
    if (call.tool !== tool || !call.mutated || call.replay) continue;
    const effect = effectOf(call);
    applied.set(effect, [...(applied.get(effect) ?? []), call]);
  }
  const duplicates = [...applied].filter(([, group]) => group.length > 1);
  if (duplicates.length === 0) {
    return passed(`${tool} applied ${plural(applied.size, 'effect')}, none twice`, 1, applied.size);
  }
  const [effect, group] = duplicates[0];
  const detail = group.map((c) => `#${c.seq} status ${c.status}`).join(', ');
  const others =
    duplicates.length > 1 ? `, and ${plural(duplicates.length - 1, 'other effect')} more than once` : '';
  return failed(
    'DUPLICATE_EFFECT',
    `${tool} applied ${effect} ${group.length} times (${detail})${others}`,
    1,
    group.length,
  );
}

export const noDuplicateEffect = defineKind({
  key: 'no_duplicate_effect',
  fields: { no_duplicate_effect: z.string().min(1) },
  evidence: 'calls',
  params: { no_duplicate_effect: EXACT },
  tools: [['no_duplicate_effect']],
  grade: (e, record) => gradeNoDuplicateEffect(e.no_duplicate_effect, record.calls),
});
