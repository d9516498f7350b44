// How a call and a value read as plain text (`refund_payment(amount=40, order_id=ORD-1001)`): shared
// by compare's explanation sentences and by every rendering of a report's steps, so both say a call
// the same way.
import { canonicalJson } from './canonical-json.js';

/** What a step's text needs of it: the call, and what it got. */
export interface CallText {
  tool: string;
  /** Canonical arguments (keys sorted recursively). */
  args: unknown;
  status: number;
  effect: 'applied' | 'replayed' | 'none';
  /** The fault injected into this call, if any. */
  fault?: string;
  /** How many rows a successful call returned, when it returned a list. */
  rows?: number;
  /** The error code beside a failed call's status. */
  code?: string;
}

const MAX_VALUE = 40;

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
export function renderCall(step: Pick<CallText, 'tool' | 'args'>): string {
  return `${step.tool}(${renderArgs(step.args)})`;
}

/** What the caller got, e.g. `504 (applied, fault timeout_after_mutation)` or `200 (none)`. */
export function renderResult(step: CallText): string {
  const status = step.status === 0 ? 'a dropped connection' : String(step.status);
  return `${status} (${step.effect}${step.fault ? `, fault ${step.fault}` : ''})`;
}

/** What a call got, briefly: `2 results`, `200 (applied)`, `504 (applied, fault timeout_after_mutation)`. */
export function renderOutcome(step: CallText): string {
  const what =
    step.status === 0
      ? 'a dropped connection'
      : step.rows !== undefined
        ? `${step.rows} result${step.rows === 1 ? '' : 's'}`
        : step.code
          ? `${step.status} ${step.code}`
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
