// Expectations on the calls the gateway recorded on the tool's side (record.calls). Every attempt
// the gateway recorded counts, whatever its status: a call refused with 400 or answered with a
// fault was still made. What the agent says it called (result.tool_calls) is never read.
import type { ExpectationOf } from '../config/schema.js';
import { canonicalJson } from '../model/canonical-json.js';
import type { CallRecord } from '../model/episode.js';
import { formatValue, sameValue } from './values.js';
import { failed, type Grade, passed, plural } from './verdicts.js';

/** Whether a status is a success the caller saw (2xx); 0 is a dropped connection. */
export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** The calls in the order the gateway took them. */
export function inSeqOrder(calls: CallRecord[]): CallRecord[] {
  return [...calls].sort((a, b) => a.seq - b.seq);
}

/** Names calls for a message: `#2, #5`. */
function seqs(calls: CallRecord[]): string {
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

function describeArgs(args: Record<string, unknown> | undefined): string {
  if (!args || Object.keys(args).length === 0) return '';
  return ` with ${Object.entries(args)
    .map(([k, v]) => `${k} = ${formatValue(v)}`)
    .join(', ')}`;
}

/** `tool_called`: the tool's calls (with those arguments, when given) number between min and max. */
export function gradeToolCalled(
  spec: ExpectationOf<'tool_called'>['tool_called'],
  calls: CallRecord[],
): Grade {
  const min = spec.min ?? 1;
  const matching = calls.filter((c) => c.tool === spec.tool && (!spec.args || argsInclude(c, spec.args)));
  const range =
    spec.max === undefined
      ? `at least ${plural(min, 'time')}`
      : spec.max === min
        ? `exactly ${plural(min, 'time')}`
        : `between ${min} and ${plural(spec.max, 'time')}`;
  const wanted = `${spec.tool} called ${range}${describeArgs(spec.args)}`;
  const got = `${matching.length}${matching.length ? ` (${seqs(matching)})` : ''}`;
  const expected = { min, ...(spec.max === undefined ? {} : { max: spec.max }) };
  if (matching.length < min) {
    return failed('MISSING_EFFECT', `expected ${wanted}, got ${got}`, expected, matching.length);
  }
  if (spec.max !== undefined && matching.length > spec.max) {
    return failed('TOO_MANY_CALLS', `expected ${wanted}, got ${got}`, expected, matching.length);
  }
  return passed(
    `${spec.tool} was called ${plural(matching.length, 'time')}${describeArgs(spec.args)}`,
    expected,
    matching.length,
  );
}

/** `tool_not_called`: the gateway recorded no call of the tool. */
export function gradeToolNotCalled(tool: string, calls: CallRecord[]): Grade {
  const made = inSeqOrder(calls).filter((c) => c.tool === tool);
  if (made.length === 0) return passed(`${tool} was never called`, 0, 0);
  return failed(
    'FORBIDDEN_CALL',
    `expected ${tool} never called, got ${plural(made.length, 'call')} (${seqs(made)})`,
    0,
    made.length,
  );
}

/** What a call applied: its effect key, or else its tool and canonical arguments. */
export function effectOf(call: CallRecord): string {
  return call.effectKey ?? `${call.tool}(${canonicalJson(call.args)})`;
}

/**
 * `no_duplicate_effect`: among the tool's calls that changed the database (mutated, not an
 * idempotent replay), no two applied the same effect. A call that timed out after mutating counts:
 * the effect landed even though the caller saw 504, so a blind retry that lands again is a duplicate.
 */
export function gradeNoDuplicateEffect(tool: string, calls: CallRecord[]): Grade {
  const applied = new Map<string, CallRecord[]>();
  for (const call of inSeqOrder(calls)) {
    if (call.tool !== tool || !call.mutated || call.replay) continue;
    const effect = effectOf(call);
    applied.set(effect, [...(applied.get(effect) ?? []), call]);
  }
  const duplicates = [...applied].filter(([, group]) => group.length > 1);
  if (duplicates.length === 0) {
    return passed(`${tool} applied ${plural(applied.size, 'effect')}, none twice`, 1, applied.size);
  }
  const [effect, group] = duplicates[0];
  const detail = group.map((c) => `#${c.seq} status ${c.status}`).join(', ');
  const others =
    duplicates.length > 1 ? `, and ${plural(duplicates.length - 1, 'other effect')} more than once` : '';
  return failed(
    'DUPLICATE_EFFECT',
    `${tool} applied ${effect} ${group.length} times (${detail})${others}`,
    1,
    group.length,
  );
}

/** `order`: every must_call tool was called before the first call of `before`; vacuous when it never was. */
export function gradeOrder(spec: ExpectationOf<'order'>['order'], calls: CallRecord[]): Grade {
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

/** `max_tool_calls`: the gateway recorded at most n calls. */
export function gradeMaxToolCalls(max: number, calls: CallRecord[]): Grade {
  if (calls.length <= max) {
    return passed(`${plural(calls.length, 'call')}, within the limit of ${max}`, max, calls.length);
  }
  const byTool = countByTool(calls);
  return failed(
    'TOO_MANY_CALLS',
    `expected at most ${plural(max, 'call')}, got ${calls.length} (${byTool})`,
    max,
    calls.length,
  );
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

/** `max_retries`: at most n retries over all tools. */
export function gradeMaxRetries(max: number, calls: CallRecord[]): Grade {
  const retries = retriesOf(calls);
  if (retries.length <= max) {
    return passed(
      `${plural(retries.length, 'retry', 'retries')}, within the limit of ${max}`,
      max,
      retries.length,
    );
  }
  return failed(
    'TOO_MANY_RETRIES',
    `expected at most ${plural(max, 'retry', 'retries')}, got ${retries.length} (${countByTool(retries)})`,
    max,
    retries.length,
  );
}

function countByTool(calls: CallRecord[]): string {
  const counts = new Map<string, number>();
  for (const c of calls) counts.set(c.tool, (counts.get(c.tool) ?? 0) + 1);
  return [...counts].map(([tool, n]) => `${tool} x${n}`).join(', ');
}
