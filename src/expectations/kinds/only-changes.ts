// `only_changes: [tables]`: no table outside the list differs from its initial content (`[]`:
// nothing may change); catches extra effects.
import { z } from 'zod';
import type { StateDiff } from '../../model/episode.js';
import { defineKind } from '../kind.js';
import { ANY_OF } from '../params.js';
import { describeTable } from '../row-changes.js';
import { failed, type Grade, passed } from '../verdicts.js';

/** `only_changes`: no table outside the list differs from its initial content. */
export function gradeOnlyChanges(allowed: string[], diff: StateDiff): Grade {
  const outside = Object.values(diff.tables)
    .filter((t) => !allowed.includes(t.table) && describeTable(t) !== '')
    .sort((a, b) => a.table.localeCompare(b.table));
  const scope = allowed.length ? `only ${allowed.join(', ')} may change` : 'nothing may change';
  if (outside.length === 0) return passed(`${scope}, and nothing else changed`, allowed, []);
  const named = outside.map((t) => `${t.table} (${describeTable(t)})`);
  return failed(
    'EXTRA_EFFECT',
    `${scope}, but ${named.join(' and ')} changed`,
    allowed,
    outside.map((t) => t.table),
  );
}

export const onlyChanges = defineKind({
  key: 'only_changes',
  fields: { only_changes: z.array(z.string().min(1)) },
  evidence: 'state',
  params: { only_changes: ANY_OF },
  // It fails on the tables outside its list: those are the rows it reads.
  reads: (e) => ({ outside: e.only_changes }),
  grade: (e, record) => gradeOnlyChanges(e.only_changes, record.diff),
});
