// `forbid_changes: {table, ops}`: no such row operation happened on that table, in the net diff or
// in any call's own changes.
import { z } from 'zod';
import type { CallRecord, StateDiff } from '../../model/episode.js';
import { defineKind } from '../kind.js';
import { ALL_OF, EXACT, fields } from '../params.js';
import { changesOf, PAST, rowNames } from '../row-changes.js';
import { failed, type Grade, passed, plural } from '../verdicts.js';

const FIELDS = {
  forbid_changes: z.strictObject({
    table: z.string().min(1),
    ops: z.array(z.enum(['insert', 'update', 'delete'])).default(['insert', 'update', 'delete']),
  }),
};
type Spec = z.infer<typeof FIELDS.forbid_changes>;

/**
 * `forbid_changes`: no such row operation happened on the table. Both the net diff and each call's
 * own changes count, so a row a call inserted and a later call deleted is still caught.
 */
export function gradeForbidChanges(spec: Spec, diff: StateDiff, calls: CallRecord[]): Grade {
  const ops = spec.ops ?? ['insert', 'update', 'delete'];
  const found: string[] = [];
  for (const op of ops) {
    const net = changesOf(diff, spec.table, op);
    if (net.length > 0) {
      found.push(`${plural(net.length, `${PAST[op]} row`)} (${rowNames(net)})`);
      continue;
    }
    const byCall = calls.filter((c) => c.changes.some((ch) => ch.table === spec.table && ch.op === op));
    if (byCall.length > 0) {
      const seqs = byCall.map((c) => `${c.tool} #${c.seq}`).join(', ');
      found.push(`${PAST[op]} rows by ${seqs}, undone before the end`);
    }
  }
  const forbidden = ops.join('/');
  if (found.length === 0) return passed(`${spec.table}: no ${forbidden}, as required`, ops, []);
  return failed(
    'EXTRA_EFFECT',
    `${spec.table}: expected no ${forbidden}, got ${found.join('; ')}`,
    ops,
    found,
  );
}

export const forbidChanges = defineKind({
  key: 'forbid_changes',
  fields: FIELDS,
  evidence: 'state',
  params: { forbid_changes: fields({ table: EXACT, ops: ALL_OF }) },
  reads: (e) => ({ text: e.forbid_changes.table }),
  grade: (e, record) => gradeForbidChanges(e.forbid_changes, record.diff, record.calls),
});
