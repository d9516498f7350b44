// `order: {before, must_call, must_learn}`: every must_call tool was called, and every must_learn
// fact learned from the user, before the first call of `before` (vacuous when `before` is never
// called). A fact counts as learned before a call when the user turn that first gave it was sent
// before the call reached the gateway: the call's agent turn is at least that user turn.
import { z } from 'zod';
import type { CallRecord, Conversation, EpisodeRecord } from '../../model/episode.js';
import { inSeqOrder } from '../call-log.js';
import { defineKind } from '../kind.js';
import { ALL_OF, EXACT, fields } from '../params.js';
import { failed, type Grade, passed } from '../verdicts.js';

const FIELDS = {
  order: z
    .strictObject({
      before: z.string().min(1),
      must_call: z.array(z.string().min(1)).min(1).optional(),
      must_learn: z
        .array(z.string().min(1))
        .min(1)
        .optional()
        .describe("Facts of the scenario's user: each learned before the first call of `before`."),
    })
    .refine((o) => o.must_call !== undefined || o.must_learn !== undefined, {
      message: 'order needs must_call (tools), must_learn (user facts) or both',
    }),
};
type Spec = z.infer<typeof FIELDS.order>;

/** `order`: every must_call tool and every must_learn fact came before the first call of `before`. */
export function gradeOrder(spec: Spec, calls: CallRecord[], conversation?: Conversation): Grade {
  const ordered = inSeqOrder(calls);
  const first = ordered.find((c) => c.tool === spec.before);
  const wanted = [...(spec.must_call ?? []), ...(spec.must_learn ?? [])];
  if (!first) {
    return passed(`${spec.before} was never called, so the order holds (vacuous)`, wanted, []);
  }
  const earlier = new Set(ordered.filter((c) => c.seq < first.seq).map((c) => c.tool));
  const missing = (spec.must_call ?? []).filter((tool) => !earlier.has(tool));
  const late = missing.map((tool) => {
    const later = ordered.find((c) => c.tool === tool);
    return later ? `${tool} (first called at #${later.seq})` : `${tool} (never called)`;
  });
  const unlearned = unlearnedFacts(spec.must_learn ?? [], first, conversation);
  const known = [...earlier, ...learnedBy(first, conversation)];
  if (missing.length === 0 && unlearned.length === 0) {
    return passed(
      `${wanted.join(', ')} came before ${spec.before} (#${first.seq}${turnOf(first)})`,
      wanted,
      known,
    );
  }
  const what = [...missing, ...unlearned.map((u) => u.fact)];
  const why = [...late, ...unlearned.map((u) => u.why)];
  return failed(
    'ORDER_VIOLATION',
    `expected ${what.join(', ')} before ${spec.before}, but ${spec.before} was first called at #${first.seq}${turnOf(first)} before ${why.join(', ')}`,
    wanted,
    known,
  );
}

const turnOf = (call: CallRecord) => (call.turn === undefined ? '' : `, agent turn ${call.turn}`);

/** The facts the user had given by the call's turn. */
function learnedBy(call: CallRecord, conversation?: Conversation): string[] {
  if (!conversation || call.turn === undefined) return [];
  const turn = call.turn;
  return Object.entries(conversation.learned)
    .filter(([, at]) => at <= turn)
    .map(([fact]) => fact);
}

/** The facts not learned by the call's turn, each with why. A call with no turn knows no fact (fail closed). */
function unlearnedFacts(
  facts: readonly string[],
  call: CallRecord,
  conversation?: Conversation,
): { fact: string; why: string }[] {
  return facts.flatMap((fact) => {
    if (!conversation) return [{ fact, why: `${fact} (the episode has no conversation)` }];
    const at = conversation.learned[fact];
    if (at !== undefined && call.turn !== undefined && at <= call.turn) return [];
    const why = at === undefined ? `${fact} (never learned)` : `${fact} (learned at user turn ${at})`;
    return [{ fact, why }];
  });
}

export const order = defineKind({
  key: 'order',
  fields: FIELDS,
  evidence: 'calls',
  params: { order: fields({ before: EXACT, must_call: ALL_OF, must_learn: ALL_OF }) },
  tools: [
    ['order', 'before'],
    ['order', 'must_call', '*'],
  ],
  grade: (e, record: EpisodeRecord) => gradeOrder(e.order, record.calls, record.conversation),
});
