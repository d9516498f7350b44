// Which fault rule fires for a call, and what each error-shaped fault shows the caller
// (docs/formats/twin.md). Rules are checked in scenario order; the first whose `when` holds wins.
import { createHash } from 'node:crypto';
import type { FaultName, FaultRule } from '../config/schema.js';
import { includesArgs } from './canonical.js';

/** A fault rule that fired, with its position in the scenario's `faults` list. */
export interface FiredFault {
  rule: FaultRule;
  index: number;
}

/** What a call looks like to the fault rules. */
export interface FaultContext {
  tool: string;
  /** The n-th call of this tool in the episode that reached the fault check (1-based). */
  callNumber: number;
  args: unknown;
  seed: number;
}

/** A draw in [0, 1) from sha256 of (seed, rule index, tool, call number): the same inputs, the same draw. */
export function faultDraw(seed: number, ruleIndex: number, tool: string, callNumber: number): number {
  const digest = createHash('sha256')
    .update(`${seed}\u0000${ruleIndex}\u0000${tool}\u0000${callNumber}`)
    .digest();
  // 48 bits fit a double exactly, so the draw is uniform and never reaches 1.
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/** Whether every condition the rule's `when` gives holds for this call (no condition: every call). */
export function whenHolds(rule: FaultRule, index: number, ctx: FaultContext): boolean {
  const w = rule.when;
  if (w.call !== undefined && ctx.callNumber !== w.call) return false;
  if (w.calls !== undefined && !w.calls.includes(ctx.callNumber)) return false;
  if (w.first !== undefined && ctx.callNumber > w.first) return false;
  if (w.args !== undefined && !includesArgs(ctx.args, w.args)) return false;
  if (w.probability !== undefined && faultDraw(ctx.seed, index, ctx.tool, ctx.callNumber) >= w.probability) {
    return false;
  }
  return true;
}

/** The first rule for this tool whose conditions hold, or undefined. */
export function pickFault(rules: readonly FaultRule[], ctx: FaultContext): FiredFault | undefined {
  for (let index = 0; index < rules.length; index++) {
    const rule = rules[index];
    if (rule.tool === ctx.tool && whenHolds(rule, index, ctx)) return { rule, index };
  }
  return undefined;
}

/** The error a fault shows the caller, before the rule's own `message` replaces the default. */
export interface FaultError {
  status: number;
  code: string;
  message: string;
}

/** Faults whose caller-visible fact is an error reply. */
export const FAULT_ERRORS: Partial<Record<FaultName, FaultError>> = {
  timeout_before_mutation: { status: 504, code: 'TIMEOUT', message: 'The tool did not answer in time.' },
  timeout_after_mutation: { status: 504, code: 'TIMEOUT', message: 'The tool did not answer in time.' },
  rate_limited: { status: 429, code: 'RATE_LIMITED', message: 'Too many requests.' },
  server_error: { status: 500, code: 'SERVER_ERROR', message: 'The tool failed with an internal error.' },
  unavailable: { status: 503, code: 'UNAVAILABLE', message: 'The tool is temporarily unavailable.' },
  non_retryable_error: { status: 422, code: 'UNPROCESSABLE', message: 'The request cannot be processed.' },
  auth_denied: { status: 403, code: 'AUTH_DENIED', message: 'The credentials were refused.' },
  // The caller sees a plain server error: nothing tells it that part of the work was committed.
  inconsistent_state: {
    status: 500,
    code: 'SERVER_ERROR',
    message: 'The tool failed with an internal error.',
  },
};

/** The error reply of an error-shaped fault, with the rule's message when it has one. */
export function faultError(rule: FaultRule): FaultError {
  const base = FAULT_ERRORS[rule.fault];
  if (!base) throw new Error(`fault ${rule.fault} has no error reply`);
  return { ...base, message: rule.message ?? base.message };
}

/** Seconds for the Retry-After header of rate_limited and unavailable (default 1). */
export function retryAfterSeconds(rule: FaultRule): number | undefined {
  if (rule.fault !== 'rate_limited' && rule.fault !== 'unavailable') return undefined;
  return rule.retry_after ?? 1;
}

/** How long the fault holds the reply: delay_ms when given, else 1000 ms for `delay` and 0 for the rest. */
export function faultDelayMs(rule: FaultRule): number {
  return rule.delay_ms ?? (rule.fault === 'delay' ? 1000 : 0);
}
