// The call path, one for HTTP and MCP alike (docs/gateway.md, "Order of checks"): allowed tools,
// known tool, body, arguments, idempotency, faults, preconditions, the tool. Every call is recorded,
// including one the session cut off (the episode ended before its body arrived or its reply left).
import type { Tool } from '../config/schema.js';
import { canonicalize, canonicalJson } from '../model/canonical-json.js';
import type { CallRecord } from '../model/episode.js';
import { withFault } from './apply-fault.js';
import { fillPlaceholders } from './canonical.js';
import { pickFault } from './faults.js';
import {
  type Args,
  answerOutcome,
  type CallOutcome,
  cutOffOutcome,
  errorOutcome,
  fromRun,
  harnessErrorOf,
  type ValidCall,
  type Wire,
} from './outcome.js';
import { type BodyRead, jsonDepth, MAX_JSON_DEPTH } from './request-body.js';
import { runTool } from './run-tool.js';
import type { SessionState } from './session.js';

export type { Wire } from './outcome.js';

/** One call as a transport received it. */
export interface CallInput {
  /** The tool's name; '' when the request ended before it could be known (an MCP body). */
  tool: string;
  /** The raw request body (HTTP), arguments already parsed (MCP), or a body read that failed. */
  body: { json: string } | { value: unknown } | Exclude<BodyRead, { text: string }>;
  via: 'http' | 'mcp';
}

/** What the transport sends back. */
export interface CallReply {
  /** 0: drop the connection without a reply. */
  status: number;
  body?: { result: unknown } | { error: { code: string; message: string } };
  headers: Record<string, string>;
  wire: Wire;
}

/** Runs one call through every check, records it, and returns the reply to send. */
export async function handleCall(session: SessionState, input: CallInput): Promise<CallReply> {
  const seq = session.nextSeq();
  const started = new Date();
  const t0 = performance.now();
  const parsed = parseBody(input.body);
  const tool = session.tools.get(input.tool);
  let outcome: CallOutcome;
  let effectKey: string | undefined;
  try {
    if ('cutOff' in input.body) outcome = bodyCutOff(input.body.cutOff);
    else if (session.cutoff.aborted) outcome = cutOffOutcome(`Cut off before it ran: ${cutReason(session)}.`);
    else if (!tool && (input.tool !== '' || parsed.ok)) outcome = refuseTool(session, input.tool);
    else if (!parsed.ok) outcome = parsed.outcome;
    else if (!tool) outcome = refuseTool(session, input.tool);
    else {
      const problem = session.checks.get(tool.name)!(parsed.args);
      const args = parsed.args as Args;
      if (problem) outcome = errorOutcome(400, 'INVALID_ARGUMENTS', problem);
      else {
        effectKey = tool.effect_key === undefined ? undefined : fillPlaceholders(tool.effect_key, args);
        outcome = await validCall(session, tool, args, input.via);
      }
    }
  } catch (err) {
    // A bug or a lost database connection must not take the gateway down: the caller gets a 500.
    outcome = gatewayError(err);
  }
  // Cut off while it ran: no reply goes out, so the record says what the caller never saw.
  if (session.cutoff.aborted && !outcome.cutOff) outcome = cutAfterRun(outcome, cutReason(session));
  session.record({
    ...recordFields(outcome),
    seq,
    tool: input.tool,
    args: parsed.ok ? canonicalize(parsed.args) : null,
    ...(effectKey !== undefined ? { effectKey } : {}),
    risk: (tool ?? session.suiteTools.get(input.tool))?.risk ?? 'read',
    startedAt: started.toISOString(),
    durationMs: round(performance.now() - t0),
    via: input.via,
  });
  return toReply(outcome);
}

function parseBody(
  body: CallInput['body'],
): { ok: true; args: unknown } | { ok: false; outcome: CallOutcome } {
  if ('cutOff' in body) return { ok: false, outcome: bodyCutOff(body.cutOff) };
  if ('tooLarge' in body) {
    return {
      ok: false,
      outcome: errorOutcome(413, 'PAYLOAD_TOO_LARGE', 'The request body is larger than 1 MiB.'),
    };
  }
  if ('value' in body) return { ok: true, args: body.value ?? {} };
  // An empty body is a call without arguments.
  if (body.json.trim() === '') return { ok: true, args: {} };
  // Counted on the text before parsing: nothing deep is ever built, walked or canonicalized.
  if (jsonDepth(body.json, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    return {
      ok: false,
      outcome: errorOutcome(400, 'BODY_TOO_DEEP', `The body nests deeper than ${MAX_JSON_DEPTH} levels.`),
    };
  }
  try {
    return { ok: true, args: JSON.parse(body.json) };
  } catch (err) {
    return {
      ok: false,
      outcome: errorOutcome(400, 'INVALID_JSON', `The body is not JSON: ${(err as Error).message}`),
    };
  }
}

function cutReason(session: SessionState): string {
  return String(session.cutoff.reason ?? 'the episode ended');
}

function bodyCutOff(cut: { bytes: number; reason: string }): CallOutcome {
  return cutOffOutcome(`Cut off while its body was arriving (${cut.bytes} bytes in): ${cut.reason}.`);
}

/** A call that ran (or was refused) while the session was being cut off: its reply never leaves. */
function cutAfterRun(o: CallOutcome, reason: string): CallOutcome {
  const answered = o.error ? `${o.status} ${o.error.code}` : String(o.status);
  const cut = cutOffOutcome(`Cut off before its reply was sent (${answered}): ${reason}.`, o.changes);
  return o.fault ? { ...cut, fault: o.fault } : cut;
}

function refuseTool(session: SessionState, name: string): CallOutcome {
  if (session.suiteTools.has(name)) {
    return errorOutcome(403, 'TOOL_NOT_ALLOWED', `The tool ${name} is not available in this scenario.`);
  }
  return errorOutcome(404, 'UNKNOWN_TOOL', `There is no tool named ${name}.`);
}

/** Idempotency, then faults and the tool. */
async function validCall(
  session: SessionState,
  tool: Tool,
  args: Args,
  via: CallInput['via'],
): Promise<CallOutcome> {
  // Numbered before any wait, so the number depends on arrival order only.
  const callNumber = session.nextCallNumber(tool.name);
  const keyValue = tool.idempotency_key === undefined ? undefined : args[tool.idempotency_key];
  const call: ValidCall = { session, tool, args, argsJson: canonicalJson(args), via };
  if (keyValue === undefined || keyValue === null) return faultedCall(call, callNumber);
  call.key = `${tool.name}\u0000${canonicalJson(keyValue)}`;
  return session.idempotency.serialize(
    call.key,
    async () => replayStored(call) ?? faultedCall(call, callNumber),
  );
}

/** The stored answer for the call's key: a replay, a conflict, or undefined when the key is new. */
function replayStored(call: ValidCall): CallOutcome | undefined {
  const stored = call.key === undefined ? undefined : call.session.idempotency.get(call.key);
  if (!stored) return undefined;
  if (stored.argsJson !== call.argsJson) {
    const name = call.tool.idempotency_key!;
    return errorOutcome(
      409,
      'IDEMPOTENCY_CONFLICT',
      `The ${name} ${canonicalJson(call.args[name])} was already used with different arguments.`,
    );
  }
  return { ...answerOutcome(stored.answer), changes: [], replay: true };
}

async function faultedCall(call: ValidCall, callNumber: number): Promise<CallOutcome> {
  const { session, tool, args } = call;
  const spec = session.spec;
  const fired = pickFault(spec.faults, {
    tool: tool.name,
    callNumber,
    args: canonicalize(args),
    seed: spec.seed,
  });
  const outcome = fired
    ? await withFault(call, fired.rule)
    : fromRun(await runTool(spec.sandbox, tool, args, { mode: 'commit' }));
  if (call.key !== undefined && outcome.answer)
    session.idempotency.keep(call.key, call.argsJson, outcome.answer);
  if (outcome.duplicate) await deliverAgain(call);
  return outcome;
}

/** duplicate_delivery: the same request reaches the tool again, recorded as its own call that no caller sees. */
async function deliverAgain(call: ValidCall): Promise<void> {
  const { session, tool, args } = call;
  const seq = session.nextSeq();
  const started = new Date();
  const t0 = performance.now();
  let outcome: CallOutcome;
  try {
    outcome =
      replayStored(call) ?? fromRun(await runTool(session.spec.sandbox, tool, args, { mode: 'commit' }));
  } catch (err) {
    outcome = gatewayError(err);
  }
  if (call.key !== undefined && outcome.answer)
    session.idempotency.keep(call.key, call.argsJson, outcome.answer);
  session.record({
    ...recordFields({ ...outcome, fault: 'duplicate_delivery' }),
    seq,
    tool: tool.name,
    args: canonicalize(args),
    ...(tool.effect_key !== undefined ? { effectKey: fillPlaceholders(tool.effect_key, args) } : {}),
    risk: tool.risk,
    startedAt: started.toISOString(),
    durationMs: round(performance.now() - t0),
    via: call.via,
  });
}

/** An error of the gateway itself: the caller gets a 500 and the episode cannot be graded. */
function gatewayError(err: unknown): CallOutcome {
  const message = err instanceof Error ? err.message : String(err);
  return { ...errorOutcome(500, 'GATEWAY_ERROR', message), harnessError: `GATEWAY_ERROR: ${message}` };
}

/** The record fields that come from the outcome: what the caller saw and what the database did. */
function recordFields(
  o: CallOutcome,
): Pick<
  CallRecord,
  'status' | 'result' | 'error' | 'fault' | 'mutated' | 'replay' | 'changes' | 'cutOff' | 'harnessError'
> {
  const harnessError = o.harnessError ?? harnessErrorOf(o.answer);
  return {
    status: o.status,
    ...(o.error ? { error: o.error } : { result: o.result }),
    ...(o.fault ? { fault: o.fault } : {}),
    mutated: o.changes.length > 0,
    replay: o.replay ?? false,
    changes: o.changes,
    ...(o.cutOff ? { cutOff: true as const } : {}),
    ...(harnessError ? { harnessError } : {}),
  };
}

function toReply(o: CallOutcome): CallReply {
  const headers = { ...(o.headers ?? {}) };
  if (o.replay) headers['idempotent-replayed'] = 'true';
  // A cut-off call's connection is closed without a reply, like a dropped one.
  if (o.wire === 'dropped' || o.cutOff) return { status: 0, headers, wire: 'dropped' };
  const body = o.error ? { error: o.error } : { result: o.result ?? null };
  return { status: o.status, body, headers, wire: o.wire ?? 'json' };
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
