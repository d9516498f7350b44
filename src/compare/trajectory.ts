// An episode's trajectory: its recorded calls as steps, and their compact plain-text rendering
// (`refund_payment(amount=40, order_id=ORD-1001)`) shared by every explanation sentence.
import { canonicalJson } from '../model/canonical-json.js';
import type { CallRecord } from '../model/episode.js';

export type Effect = 'applied' | 'replayed' | 'none';

/** One step of a trajectory: what was called and what happened, from the gateway's record. */
export interface Step {
  tool: string;
  /** Canonical arguments (keys sorted recursively). */
  args: unknown;
  status: number;
  effect: Effect;
  /** The fault injected into this call, if any. */
  fault?: string;
  /** How many rows a successful call returned, when it returned a list. */
  rows?: number;
}

const MAX_VALUE = 40;

/** The steps of a trajectory, in call order. */
export function toTrajectory(calls: readonly CallRecord[]): Step[] {
  return [...calls]
    .sort((a, b) => a.seq - b.seq)
    .map((c) => {
      const step: Step = {
        tool: c.tool,
        args: c.args,
        status: c.status,
        effect: c.replay ? 'replayed' : c.mutated ? 'applied' : 'none',
      };
      if (c.fault) step.fault = c.fault;
      if (c.status >= 200 && c.status < 300 && Array.isArray(c.result)) step.rows = c.result.length;
      return step;
    });
}

/** Shortens text beyond `max` characters with an ellipsis. */
export function elide(text: string, max = MAX_VALUE): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** One value, compactly: plain words bare, other strings quoted, objects as JSON, long ones elided. */
export function renderValue(value: unknown, max = MAX_VALUE): string {
  if (typeof value === 'string')
    return elide(/^[\w.@:/+-]+$/.test(value) ? value : JSON.stringify(value), max);
  return elide(canonicalJson(value), max);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Arguments as `k=v` pairs, sorted by key. */
export function renderArgs(args: unknown): string {
  if (args === undefined || args === null) return '';
  if (!isRecord(args)) return renderValue(args);
  return Object.keys(args)
    .filter((k) => args[k] !== undefined)
    .sort()
    .map((k) => `${k}=${renderValue(args[k])}`)
    .join(', ');
}

/** A call as `tool(k=v, ...)`. */
export function renderCall(step: Pick<Step, 'tool' | 'args'>): string {
  return `${step.tool}(${renderArgs(step.args)})`;
}

/** What the caller got, e.g. `504 (applied, fault timeout_after_mutation)` or `200 (none)`. */
export function renderResult(step: Step): string {
  const status = step.status === 0 ? 'a dropped connection' : String(step.status);
  return `${status} (${step.effect}${step.fault ? `, fault ${step.fault}` : ''})`;
}

/** The identity of a step for grouping: tool, canonical arguments, status, effect and rows returned. */
export function stepSignature(step: Step): string {
  return [step.tool, canonicalJson(step.args), step.status, step.effect, step.rows ?? ''].join('\u0000');
}

/** What a call got, briefly: `2 results`, `200 (applied)`, `504 (applied, fault timeout_after_mutation)`. */
export function renderOutcome(step: Step): string {
  const what =
    step.status === 0
      ? 'a dropped connection'
      : step.rows !== undefined
        ? `${step.rows} result${step.rows === 1 ? '' : 's'}`
        : String(step.status);
  const extras = [step.effect !== 'none' ? step.effect : '', step.fault ? `fault ${step.fault}` : ''].filter(
    Boolean,
  );
  return extras.length > 0 ? `${what} (${extras.join(', ')})` : what;
}

/** The argument keys whose values differ between two calls of the same tool. */
export function differingArgs(a: unknown, b: unknown): string[] {
  if (!isRecord(a) || !isRecord(b)) return canonicalJson(a) === canonicalJson(b) ? [] : [''];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  // A key one side lacks differs even from an explicit null on the other.
  const text = (o: Record<string, unknown>, k: string) =>
    o[k] === undefined ? undefined : canonicalJson(o[k]);
  return keys.filter((k) => text(a, k) !== text(b, k));
}
