// The step-by-step table of a case as plain-text rows, shared by the markdown and terminal reports:
// the calls of each side's representative episode and, in a conversation, its turns between them
// (the user's turn n, the calls of agent turn n, the agent's turn n, then the user's turn n + 1).
import { differingArgs, renderCall, renderOutcome, renderValue } from '../model/call-text.js';
import type { CaseReport, EpisodeSteps, StepReport, TurnReport } from '../model/report.js';
import { clip } from './escape.js';

/** Characters of a turn's text in a table row; the whole text (up to TURN_TEXT_CAP) is in report.json. */
export const TURN_ROW_CHARS = 160;

/** One row's worth of a side: a call, or a turn of its conversation. */
type StepEvent = { kind: 'call'; step: StepReport } | { kind: 'turn'; turn: TurnReport };

/** A side's events in the order they happened; only its calls when it is not a conversation. */
export function stepEvents(s: EpisodeSteps): StepEvent[] {
  const calls = s.steps.map((step) => ({ kind: 'call' as const, step }));
  const turns = s.turns ?? [];
  if (turns.length === 0) return calls;
  const last = Math.max(1, ...turns.map((t) => t.turn), ...s.steps.map((c) => c.turn ?? 0));
  const turnOf = (role: TurnReport['role'], n: number) =>
    turns.filter((t) => t.role === role && t.turn === n).map((turn) => ({ kind: 'turn' as const, turn }));
  const events: StepEvent[] = [];
  for (let n = 1; n <= last; n++) {
    events.push(...turnOf('user', n));
    // A call with no turn cannot be placed before any reply: it goes with the last turn.
    events.push(...calls.filter((c) => (c.step.turn ?? last) === n));
    events.push(...turnOf('agent', n));
  }
  return events;
}

/** `user (turn 2): 1990-04-02 [gave: dob]`: a turn as one row's text. */
export function turnText(t: TurnReport): string {
  const facts = t.facts && t.facts.length > 0 ? ` [gave: ${t.facts.join(', ')}]` : '';
  return `${t.role} (turn ${t.turn}): ${clip(t.text, TURN_ROW_CHARS)}${facts}`;
}

/** One step of the table: the call (with only the arguments that differ from `other`, the same tool's call on the other side) and what it got. */
function stepCells(step: StepReport | undefined, other: StepReport | undefined): [string, string] {
  if (!step) return ['', ''];
  let call = renderCall(step);
  if (other && other.tool === step.tool) {
    const keys = differingArgs(step.args, other.args);
    // Arguments that are not an object differ as a whole (key ''): the whole call shows.
    if (keys.length > 0 && keys[0] !== '') {
      const args = (step.args ?? {}) as Record<string, unknown>;
      const shown = keys.map((k) => `${k}=${args[k] === undefined ? '(absent)' : renderValue(args[k])}`);
      const more = Object.keys(args).some((k) => !keys.includes(k)) ? ', …' : '';
      call = `${step.tool}(${shown.join(', ')}${more})`;
    }
  }
  return [call, renderOutcome(step)];
}

function eventCells(e: StepEvent | undefined, other: StepEvent | undefined): [string, string] {
  if (e?.kind === 'turn') return [turnText(e.turn), ''];
  return stepCells(e?.step, other?.kind === 'call' ? other.step : undefined);
}

function sameEvent(b: StepEvent | undefined, h: StepEvent | undefined): boolean {
  if (!b || !h || b.kind !== h.kind) return false;
  if (b.kind === 'turn' && h.kind === 'turn')
    return b.turn.role === h.turn.role && b.turn.turn === h.turn.turn && b.turn.text === h.turn.text;
  if (b.kind !== 'call' || h.kind !== 'call') return false;
  return (
    b.step.tool === h.step.tool &&
    differingArgs(b.step.args, h.step.args).length === 0 &&
    b.step.status === h.step.status &&
    b.step.effect === h.step.effect
  );
}

/** Whether either side's step table holds a conversation's turns. */
export function hasTurns(steps: NonNullable<CaseReport['steps']>): boolean {
  return (steps.base?.turns?.length ?? 0) > 0 || (steps.head.turns?.length ?? 0) > 0;
}

/**
 * The step-by-step table of a case as plain-text rows: step number, then for each side present its
 * call (or turn) and what the call got. `divergent` is the first step where the sides differ (0:
 * none); `turns[i]` says, per side present, whether row i's cell is a turn (text, not a call).
 */
export function stepRows(steps: NonNullable<CaseReport['steps']>): {
  rows: string[][];
  divergent: number;
  turns: boolean[][];
} {
  const base = steps.base ? stepEvents(steps.base) : [];
  const head = stepEvents(steps.head);
  const n = Math.max(base.length, head.length);
  const rows: string[][] = [];
  const turns: boolean[][] = [];
  let divergent = 0;
  for (let i = 0; i < n; i++) {
    const b = base[i];
    const h = head[i];
    const cells = steps.base ? [...eventCells(b, h), ...eventCells(h, b)] : eventCells(h, undefined);
    if (steps.base && divergent === 0 && !sameEvent(b, h)) divergent = i + 1;
    rows.push([String(i + 1), ...cells]);
    turns.push(steps.base ? [b?.kind === 'turn', h?.kind === 'turn'] : [h?.kind === 'turn']);
  }
  return { rows, divergent, turns };
}

/** The header of the step table, matching stepRows. */
export function stepHeader(steps: NonNullable<CaseReport['steps']>): string[] {
  const call = hasTurns(steps) ? 'call or turn' : 'call';
  return steps.base
    ? ['step', `base ${call}`, 'base got', `head ${call}`, 'head got']
    : ['step', `head ${call}`, 'head got'];
}
