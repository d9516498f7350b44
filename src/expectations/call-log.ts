// Reading the calls the gateway recorded on the tool's side (record.calls), for the kinds graded on
// them. Every attempt the gateway recorded counts, whatever its status: a call refused with 400 or
// answered with a fault was still made. What the agent says it called (result.tool_calls) is never read.
import { canonicalJson } from '../model/canonical-json.js';
import type { CallRecord } from '../model/episode.js';
import { formatValue, sameValue } from './values.js';

/** Whether a status is a success the caller saw (2xx); 0 is a dropped connection. */
export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** The calls in the order the gateway took them. */
export function inSeqOrder(calls: CallRecord[]): CallRecord[] {
  return [...calls].sort((a, b) => a.seq - b.seq);
}

/** Names calls for a message: `#2, #5`. */
export function seqs(calls: CallRecord[]): string {
  const shown = calls.slice(0, 5).map((c) => `#${c.seq}`);
  return calls.length > 5 ? `${shown.join(', ')}, ...` : shown.join(', ');
}

/** Whether a call's canonical arguments include every given value, by meaning. */
export function argsInclude(call: CallRecord, args: Record<string, unknown>): boolean {
  const given = call.args;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    return Object.keys(args).length === 0;
  }
  const named = given as Record<string, unknown>;
  return Object.entries(args).every(([k, v]) => k in named && sameValue(named[k], v));
}

export function describeArgs(args: Record<string, unknown> | undefined): string {
  if (!args || Object.keys(args).length === 0) return '';
  return ` with ${Object.entries(args)
    .map(([k, v]) => `${k} = ${formatValue(v)}`)
    .join(', ')}`;
}

/** What a call applied: its effect key, or else its tool and canonical arguments. */
export function effectOf(call: CallRecord): string {
  return call.effectKey ?? `${call.tool}(${canonicalJson(call.args)})`;
}

/**
 * The retries among the calls: a call whose previous call of the same tool had the same canonical
 * arguments and failed (not 2xx, or 0 for a dropped connection).
 */
export function retriesOf(calls: CallRecord[]): CallRecord[] {
  const previous = new Map<string, CallRecord>();
  const retries: CallRecord[] = [];
  for (const call of inSeqOrder(calls)) {
    const prior = previous.get(call.tool);
    if (prior && !isSuccess(prior.status) && canonicalJson(prior.args) === canonicalJson(call.args)) {
      retries.push(call);
    }
    previous.set(call.tool, call);
  }
  return retries;
}

export function countByTool(calls: CallRecord[]): string {
  const counts = new Map<string, number>();
  for (const c of calls) counts.set(c.tool, (counts.get(c.tool) ?? 0) + 1);
  return [...counts].map(([tool, n]) => `${tool} x${n}`).join(', ');
}
