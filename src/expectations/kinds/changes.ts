// `changes: {table, inserted, updated, deleted, where}`: the row diff of that table (initial vs
// final, by primary key) has exactly the given counts; catches missing and extra effects.
import { z } from 'zod';
import type { StateDiff } from '../../model/episode.js';
import { defineKind } from '../kind.js';
import { EXACT, fields, filter } from '../params.js';
import { COUNTS, changesOf, comparisonOf, describeWhere, matchesWhere, rowNames } from '../row-changes.js';
import { failed, type Grade, passed, plural } from '../verdicts.js';

const FIELDS = {
  changes: z.strictObject({
    table: z.string().min(1),
    inserted: z.number().int().min(0).optional(),
    updated: z.number().int().min(0).optional(),
    deleted: z.number().int().min(0).optional(),
    where: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Only changed rows whose before or after values match.'),
  }),
};
type Spec = z.infer<typeof FIELDS.changes>;

/**
 * `changes`: the given counts (only those) equal the diff's counts of changed rows in the table,
 * filtered by `where`. A count below the expected one is a missing effect, above it an extra one;
 * the label follows the first mismatch in the order inserted, updated, deleted.
 */
export function gradeChanges(spec: Spec, diff: StateDiff): Grade {
  const where = spec.where;
  const cmp = comparisonOf(diff, spec.table);
  const expected: Record<string, number> = {};
  const actual: Record<string, number> = {};
  const mismatches: string[] = [];
  let label: 'MISSING_EFFECT' | 'EXTRA_EFFECT' | undefined;
  for (const [count, op] of COUNTS) {
    const want = spec[count];
    if (want === undefined) continue;
    const rows = changesOf(diff, spec.table, op).filter((c) => !where || matchesWhere(c, where, cmp));
    expected[count] = want;
    actual[count] = rows.length;
    if (rows.length === want) continue;
    label ??= rows.length < want ? 'MISSING_EFFECT' : 'EXTRA_EFFECT';
    mismatches.push(
      `expected ${plural(want, `${count} row`)}, got ${rows.length}${rows.length ? ` (${rowNames(rows)})` : ''}`,
    );
  }
  const subject = `${spec.table}${describeWhere(where)}`;
  if (Object.keys(expected).length === 0) {
    return passed(`${subject}: no count given, nothing to check`, expected, actual);
  }
  if (!label) {
    const counts = Object.entries(actual).map(([k, n]) => `${n} ${k}`);
    return passed(`${subject}: ${counts.join(', ')}, as expected`, expected, actual);
  }
  return failed(label, `${subject}: ${mismatches.join('; ')}`, expected, actual);
}

export const changes = defineKind({
  key: 'changes',
  fields: FIELDS,
  evidence: 'state',
  // Each count is exact, so a `where` that counts other rows proves neither bound.
  params: {
    changes: fields({
      table: EXACT,
      inserted: EXACT,
      updated: EXACT,
      deleted: EXACT,
      where: filter(['inserted', 'updated', 'deleted'], 'rows'),
    }),
  },
  reads: (e) => ({ text: e.changes.table }),
  grade: (e, record) => gradeChanges(e.changes, record.diff),
});
