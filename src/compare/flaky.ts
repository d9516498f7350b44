// For a side whose repeats disagree: the first step where its passing and failing repeats fork,
// said from the records only ("3 of 5 repeats called ...; the 2 failing ones called ..."). In a
// conversation the steps are its turns and calls in the order they happened, and the fork is named
// by its turn ("Repeats part at turn 2: ...").

import { differingArgs, renderArgs, renderCall, renderOutcome } from '../model/call-text.js';
import type { Conversation, GradedEpisode } from '../model/episode.js';
import { quote } from './conversation-divergence.js';
import { episodePassed, inRepeatOrder, isGradable } from './episodes.js';
import { type Step, stepSignature, toTrajectory } from './trajectory.js';

/** One step of a repeat: a call (`step`), or in a conversation a turn or its end (`said`). */
interface ForkEvent {
  signature: string;
  /** The conversation's turn it belongs to; null outside a conversation. */
  turn: number | null;
  step?: Step;
  said?: string;
}

interface Repeat {
  events: ForkEvent[];
  signatures: string[];
  passed: boolean;
  episode: GradedEpisode;
}

const STOPPED = '\u0000stopped';

function endWords(end: Conversation['end']): string {
  return end === 'user' || end === 'agent' ? `ended (by the ${end})` : `ended (${end.replace('_', ' ')})`;
}

/**
 * A repeat's events: its calls; in a conversation the user's turn n, the calls of agent turn n, the
 * agent's turn n, and the end (a call with no turn goes with the last turn, which it cannot precede).
 */
function forkEvents(episode: GradedEpisode): ForkEvent[] {
  const calls = [...episode.record.calls].sort((a, b) => a.seq - b.seq);
  const callEvent = (c: (typeof calls)[number], turn: number | null): ForkEvent => {
    const step = toTrajectory([c])[0];
    return { signature: stepSignature(step), turn, step };
  };
  const conversation = episode.record.conversation;
  if (!conversation) return calls.map((c) => callEvent(c, null));
  const turns = conversation.turns;
  const last = Math.max(1, ...turns.map((t) => t.turn), ...calls.map((c) => c.turn ?? 0));
  const events: ForkEvent[] = [];
  const turnEvents = (role: 'user' | 'agent', n: number) => {
    for (const t of turns) {
      if (t.role !== role || t.turn !== n) continue;
      const gave = t.facts && t.facts.length > 0 ? ` (giving ${t.facts.join(' and ')})` : '';
      const said =
        role === 'agent' ? `replied ${quote(t.text)}` : `heard the user say ${quote(t.text)}${gave}`;
      events.push({ signature: `\u0000${role}\u0000${t.text}`, turn: n, said });
    }
  };
  for (let n = 1; n <= last; n++) {
    turnEvents('user', n);
    for (const c of calls) if ((c.turn ?? last) === n) events.push(callEvent(c, n));
    turnEvents('agent', n);
  }
  events.push({
    signature: `\u0000end\u0000${conversation.end}`,
    turn: last,
    said: endWords(conversation.end),
  });
  return events;
}

function signatureAt(r: Repeat, i: number): string {
  return i < r.signatures.length ? r.signatures[i] : STOPPED;
}

function prefixAt(r: Repeat, i: number): string {
  return Array.from({ length: i + 1 }, (_, j) => signatureAt(r, j)).join('\u0001');
}

/**
 * When every repeat that made a call at the fork called the same tool with different arguments,
 * the keys whose values differ: the rest is the same everywhere and would only bury the difference.
 */
function forkKeys(repeats: Repeat[], i: number): string[] | null {
  const events = repeats.flatMap((r) => (r.events[i] ? [r.events[i]] : []));
  const steps = events.flatMap((e) => (e.step ? [e.step] : []));
  if (steps.length === 0 || steps.length < events.length || steps.some((s) => s.tool !== steps[0].tool))
    return null;
  const keys = new Set<string>();
  for (const s of steps) for (const k of differingArgs(steps[0].args, s.args)) keys.add(k);
  return keys.size === 0 || keys.has('') ? null : [...keys].sort();
}

/** A call with only `keys` of its arguments, `…` standing for the others. */
function renderCallOn(step: Step, keys: string[] | null): string {
  const args = step.args as Record<string, unknown> | undefined;
  if (!keys || !args) return renderCall(step);
  const shown = Object.fromEntries(keys.filter((k) => k in args).map((k) => [k, args[k]]));
  const omitted = Object.keys(args).some((k) => args[k] !== undefined && !keys.includes(k));
  const text = renderArgs(shown);
  return `${step.tool}(${text}${omitted ? `${text ? ', ' : ''}…` : ''})`;
}

/** What a repeat did at an event: `called X and got Y`, `replied "..."`, `ended (by the user)`. */
function eventWords(e: ForkEvent, keys: string[] | null): string {
  return e.step ? `called ${renderCallOn(e.step, keys)} and got ${renderOutcome(e.step)}` : (e.said ?? '');
}

/** What each distinct action of a group at step i was, with how many repeats took it. */
function actions(group: Repeat[], i: number, keys: string[] | null): { action: string; n: number }[] {
  const bySig = new Map<string, Repeat[]>();
  for (const r of group) bySig.set(signatureAt(r, i), [...(bySig.get(signatureAt(r, i)) ?? []), r]);
  return [...bySig.values()].map((rs) => {
    const event = rs[0].events[i];
    const action = event
      ? eventWords(event, keys)
      : rs[0].episode.record.conversation
        ? 'had nothing more'
        : `stopped after ${i} call${i === 1 ? '' : 's'}`;
    return { action, n: rs.length };
  });
}

/** `after every repeat called X and got Y, ` when all repeats made the same call just before the fork. */
function sharedStepBefore(repeats: Repeat[], i: number): string {
  if (i === 0) return '';
  const before = new Set(repeats.map((r) => signatureAt(r, i - 1)));
  const event = repeats[0].events[i - 1];
  if (before.size !== 1 || !event) return '';
  return `after every repeat ${eventWords(event, null)}, `;
}

function itemize(list: { action: string; n: number }[]): string {
  return list.map((a) => `${a.n} ${a.action}`).join(', ');
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The expectations the failing repeats failed, with their labels: `x (STATE_MISMATCH) in 2 of them`. */
function failedExpectations(failing: Repeat[]): string {
  const seen = new Map<string, { label?: string; n: number }>();
  for (const r of failing) {
    for (const res of r.episode.results) {
      if (res.verdict !== 'fail') continue;
      const entry = seen.get(res.id) ?? { label: res.label, n: 0 };
      entry.n += 1;
      seen.set(res.id, entry);
    }
  }
  const items = [...seen.entries()].map(
    ([id, e]) => `${id}${e.label ? ` (${e.label})` : ''}${e.n < failing.length ? ` in ${e.n} of them` : ''}`,
  );
  return items.length > 3 ? `${items.slice(0, 3).join(', ')} and ${items.length - 3} more` : items.join(', ');
}

/** Names the step where a side's passing and failing repeats fork; null when its repeats agree. */
export function explainFlaky(episodes: readonly GradedEpisode[]): string | null {
  const repeats: Repeat[] = inRepeatOrder(episodes)
    .filter(isGradable)
    .map((episode) => {
      const events = forkEvents(episode);
      return { events, signatures: events.map((e) => e.signature), passed: episodePassed(episode), episode };
    });
  const passing = repeats.filter((r) => r.passed);
  const failing = repeats.filter((r) => !r.passed);
  if (passing.length === 0 || failing.length === 0) return null;

  const longest = Math.max(...repeats.map((r) => r.events.length));
  // Prefixes only grow apart, so the first step where no passing prefix equals a failing one is the fork.
  for (let i = 0; i < longest; i++) {
    const passPrefixes = new Set(passing.map((r) => prefixAt(r, i)));
    if (failing.some((r) => passPrefixes.has(prefixAt(r, i)))) continue;
    const keys = forkKeys(repeats, i);
    const pass = actions(passing, i, keys);
    const failed = actions(failing, i, keys);
    const lead = `${sharedStepBefore(repeats, i)}${passing.length} of ${repeats.length} repeats`;
    const passText =
      pass.length === 1 ? `${lead} ${pass[0].action} and passed` : `${lead} passed (${itemize(pass)})`;
    const theFailing = failing.length === 1 ? 'the failing one' : `the ${failing.length} failing ones`;
    const failText =
      failed.length === 1 ? `${theFailing} ${failed[0].action}` : `${theFailing}: ${itemize(failed)}`;
    const turn = Math.min(...repeats.flatMap((r) => r.events[i]?.turn ?? []));
    if (Number.isFinite(turn)) return `Repeats part at turn ${turn}: ${passText}; ${failText}.`;
    return `At step ${i + 1}, ${passText}; ${failText}.`;
  }

  // Some failing repeat made exactly the calls of a passing one: the difference is in the state or reply.
  const trajectory = (r: Repeat) => r.signatures.join('\u0001');
  const full = new Set(passing.map(trajectory));
  const alike = failing.filter((r) => full.has(trajectory(r)));
  const n = alike[0].events.filter((e) => e.step).length;
  const failed = failedExpectations(alike);
  const what = failed ? `; they failed ${failed}` : '';
  const talk = alike[0].episode.record.conversation ? ' in the same conversation' : '';
  if (new Set(repeats.map(trajectory)).size === 1) {
    const calls = n === 0 ? 'no calls' : `the same ${plural(n, 'call')}`;
    return `All ${repeats.length} repeats made ${calls}${talk}, yet ${failing.length} failed${what}.`;
  }
  const calls =
    n === 0 ? 'no calls, like a passing repeat' : `the same ${plural(n, 'call')} as a passing repeat`;
  return `${alike.length} of the ${failing.length} failing repeats made ${calls}${talk}${what}.`;
}
