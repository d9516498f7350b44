// `order: {before, must_call}`: every must_call tool was called before the first call of `before`
// (vacuous when `before` is never called).
import { z } from 'zod';
import type { CallRecord } from '../../model/episode.js';
import { inSeqOrder } from '../call-log.js';
import { defineKind } from '../kind.js';
import { ALL_OF, EXACT, fields } from '../params.js';
import { failed, type Grade, passed } from '../verdicts.js';

const FIELDS = {
  order: z.strictObject({ before: z.string().min(1), must_call: z.array(z.string().min(1)).min(1) }),
};
type Spec = z.infer<typeof FIELDS.order>;

/** `order`: every must_call tool was called before the first call of `before`; vacuous when it never was. */
export function gradeOrder(spec: Spec, calls: CallRecord[]): Grade {
  const ordered = inSeqOrder(calls);
  const first = ordered.find((c) => c.tool === spec.before);
  if (!first) {
    return passed(`${spec.before} was never called, so the order holds (vacuous)`, spec.must_call, []);
  }
  const earlier = new Set(ordered.filter((c) => c.seq < first.seq).map((c) => c.tool));
  const missing = spec.must_call.filter((tool) => !earlier.has(tool));
  if (missing.length === 0) {
    return passed(`${spec.must_call.join(', ')} came before ${spec.before} (#${first.seq})`, spec.must_call, [
      ...earlier,
    ]);
  }
  const late = missing.map((tool) => {
    const later = ordered.find((c) => c.tool === tool);
    return later ? `${tool} (first called at #${later.seq})` : `${tool} (never called)`;
  });
  return failed(
    'ORDER_VIOLATION',
    `expected ${missing.join(', ')} before ${spec.before}, but ${spec.before} was first called at #${first.seq} before ${late.join(', ')}`,
    spec.must_call,
    [...earlier],
  );
}

export const order = defineKind({
  key: 'order',
  fields: FIELDS,
  evidence: 'calls',
  params: { order: fields({ before: EXACT, must_call: ALL_OF }) },
  tools: [
    ['order', 'before'],
    ['order', 'must_call', '*'],
  ],
  grade: (e, record) => gradeOrder(e.order, record.calls),
});
