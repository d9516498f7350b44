// The lockstep diff of two conversations: the calls and the agent's turns interleaved as they
// happened (the calls of agent turn n, then its reply, then the user's answer), walked side by side
// to the first event that differs, said in one sentence that names both ("At turn 2 the base asked
// for dob ("What is your date of birth?"); the head called cancel_appointment(appointment_id=101).").
import { renderCall } from '../model/call-text.js';
import type { CallRecord, Conversation } from '../model/episode.js';
import type { Divergence } from '../model/report.js';
import { type Step, stepSignature, toTrajectory } from './trajectory.js';

/** One event of a conversation: a call in agent turn `turn`, or the agent's reply that ends the turn. */
type Event =
  | { kind: 'call'; turn: number; step: Step }
  | { kind: 'reply'; turn: number; text: string; asked: string[] }
  | { kind: 'end'; turn: number; end: Conversation['end'] };

const QUOTE_CHARS = 80;
/** Text as a short one-line JSON string, cut to QUOTE_CHARS. */
export const quote = (text: string) => {
  const one = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(one.length > QUOTE_CHARS ? `${one.slice(0, QUOTE_CHARS - 1)}…` : one);
};

/** A conversation's events, in order; a call with no turn is placed in the turn it cannot precede (the last). */
export function conversationEvents(calls: readonly CallRecord[], conversation: Conversation): Event[] {
  const steps = [...calls]
    .sort((a, b) => a.seq - b.seq)
    .map((c, i) => ({ c, step: toTrajectory([c])[0], i }));
  const events: Event[] = [];
  const turns = conversation.turns;
  const last = Math.max(0, ...turns.map((t) => t.turn));
  for (let n = 1; n <= last; n++) {
    for (const { c, step } of steps) if ((c.turn ?? last) === n) events.push({ kind: 'call', turn: n, step });
    const reply = turns.find((t) => t.role === 'agent' && t.turn === n);
    if (!reply) continue;
    const answer = turns.find((t) => t.role === 'user' && t.turn === n + 1);
    events.push({ kind: 'reply', turn: n, text: reply.text, asked: answer?.facts ?? [] });
  }
  events.push({ kind: 'end', turn: last, end: conversation.end });
  return events;
}

function describe(e: Event): string {
  if (e.kind === 'call') return `called ${renderCall(e.step)}`;
  if (e.kind === 'reply')
    return e.asked.length > 0
      ? `asked for ${e.asked.join(' and ')} (${quote(e.text)})`
      : `said ${quote(e.text)}`;
  return e.end === 'user' || e.end === 'agent'
    ? `ended (by the ${e.end})`
    : `ended (${e.end.replace('_', ' ')})`;
}

function same(b: Event, h: Event): boolean {
  if (b.kind !== h.kind) return false;
  if (b.kind === 'call' && h.kind === 'call') return stepSignature(b.step) === stepSignature(h.step);
  if (b.kind === 'reply' && h.kind === 'reply') return b.text === h.text;
  return b.kind === 'end' && h.kind === 'end' && b.end === h.end;
}

/** The first event where two conversations part; `step` counts events, 0 when they are the same. */
export function firstConversationDivergence(
  base: { calls: readonly CallRecord[]; conversation: Conversation },
  head: { calls: readonly CallRecord[]; conversation: Conversation },
): Divergence {
  const b = conversationEvents(base.calls, base.conversation);
  const h = conversationEvents(head.calls, head.conversation);
  for (let i = 0; i < Math.min(b.length, h.length); i++) {
    if (same(b[i], h[i])) continue;
    const turn =
      b[i].turn === h[i].turn ? `At turn ${b[i].turn}` : `At base turn ${b[i].turn}, head turn ${h[i].turn},`;
    return {
      kind: 'different-turn',
      step: i + 1,
      sentence: `${turn} the base ${describe(b[i])}; the head ${describe(h[i])}.`,
    };
  }
  const turns = base.conversation.turns.filter((t) => t.role === 'agent').length;
  return { kind: 'same', step: 0, sentence: `Both conversations went the same way (${turns} agent turns).` };
}
