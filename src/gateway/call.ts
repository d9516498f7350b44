// The call path, one for HTTP and MCP alike (docs/gateway.md, "Order of checks"): allowed tools,
// known tool, body, arguments, idempotency, faults, preconditions, the tool. Every call is recorded.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultRule, Tool } from '../config/schema.js';
import type { CallRecord, RowChange } from '../record.js';
import { canonicalJson, canonicalize, fillPlaceholders } from './canonical.js';
import { faultDelayMs, faultError, pickFault, retryAfterSeconds } from './faults.js';
import { runTool, type ToolAnswer, type ToolRun } from './run-tool.js';
import type { EpisodeSession } from './session.js';

/** How a reply's body travels: as JSON, cut mid-JSON, made invalid, or not at all (socket closed). */
export type Wire = 'json' | 'truncated' | 'malformed' | 'dropped';

/** One call as a transport received it. */
export interface CallInput {
  tool: string;
  /** The raw request body (HTTP), arguments already parsed (MCP), or a body over the size limit. */
  body: { json: string } | { value: unknown } | { tooLarge: number };
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

type Args = Record<string, unknown>;
type ErrorBody = { code: string; message: string };

/** What a call came to, before it becomes a record and a reply. */
interface Outcome {
  status: number;
  result?: unknown;
  error?: ErrorBody;
  headers?: Record<string, string>;
  wire?: Wire;
  fault?: FaultRule['fault'];
  changes: RowChange[];
  replay?: boolean;
  /** The tool's own answer, kept for idempotent replays (absent when the tool did not answer). */
  answer?: ToolAnswer;
  /** duplicate_delivery: the request reaches the tool a second time. */
  duplicate?: boolean;
}

/** Everything the call path knows about a call that passed validation. */
interface ValidCall {
  session: EpisodeSession;
  tool: Tool;
  args: Args;
  argsJson: string;
  via: CallInput['via'];
  /** The idempotency store key, when the tool has one and the call carries it. */
  key?: string;
}

/** Runs one call through every check, records it, and returns the reply to send. */
export async function handleCall(session: EpisodeSession, input: CallInput): Promise<CallReply> {
  const seq = session.nextSeq();
  const started = new Date();
  const t0 = performance.now();
  const parsed = parseBody(input.body);
  const tool = session.tools.get(input.tool);
  let outcome: Outcome;
  let effectKey: string | undefined;
  try {
    if (!tool) outcome = refuseTool(session, input.tool);
    else if (!parsed.ok) outcome = parsed.outcome;
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
    outcome = errorOutcome(500, 'GATEWAY_ERROR', err instanceof Error ? err.message : String(err));
  }
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

function parseBody(body: CallInput['body']): { ok: true; args: unknown } | { ok: false; outcome: Outcome } {
  if ('tooLarge' in body) {
    return { ok: false, outcome: errorOutcome(413, 'PAYLOAD_TOO_LARGE', 'The request body is larger than 1 MiB.') };
  }
  if ('value' in body) return { ok: true, args: body.value ?? {} };
  // An empty body is a call without arguments.
  if (body.json.trim() === '') return { ok: true, args: {} };
  try {
    return { ok: true, args: JSON.parse(body.json) };
  } catch (err) {
    return { ok: false, outcome: errorOutcome(400, 'INVALID_JSON', `The body is not JSON: ${(err as Error).message}`) };
  }
}

function refuseTool(session: EpisodeSession, name: string): Outcome {
  if (session.suiteTools.has(name)) {
    return errorOutcome(403, 'TOOL_NOT_ALLOWED', `The tool ${name} is not available in this scenario.`);
  }
  return errorOutcome(404, 'UNKNOWN_TOOL', `There is no tool named ${name}.`);
}

/** Idempotency, then faults and the tool. */
async function validCall(session: EpisodeSession, tool: Tool, args: Args, via: CallInput['via']): Promise<Outcome> {
  // Numbered before any wait, so the number depends on arrival order only.
  const callNumber = session.nextCallNumber(tool.name);
  const keyValue = tool.idempotency_key === undefined ? undefined : args[tool.idempotency_key];
  const call: ValidCall = { session, tool, args, argsJson: canonicalJson(args), via };
  if (keyValue === undefined || keyValue === null) return faultedCall(call, callNumber);
  call.key = `${tool.name}\u0000${canonicalJson(keyValue)}`;
  return session.idempotency.serialize(call.key, async () => replayStored(call) ?? faultedCall(call, callNumber));
}

/** The stored answer for the call's key: a replay, a conflict, or undefined when the key is new. */
function replayStored(call: ValidCall): Outcome | undefined {
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

async function faultedCall(call: ValidCall, callNumber: number): Promise<Outcome> {
  const { session, tool, args } = call;
  const spec = session.spec;
  const fired = pickFault(spec.faults, { tool: tool.name, callNumber, args: canonicalize(args), seed: spec.seed });
  const outcome = fired
    ? await withFault(call, fired.rule)
    : fromRun(await runTool(spec.sandbox, tool, args, { mode: 'commit' }));
  if (call.key !== undefined && outcome.answer) session.idempotency.keep(call.key, call.argsJson, outcome.answer);
  if (outcome.duplicate) await deliverAgain(call);
  return outcome;
}

/** What each fault makes of the call: what the dependency does, and what the caller sees. */
async function withFault(call: ValidCall, rule: FaultRule): Promise<Outcome> {
  const { tool, args } = call;
  const db = call.session.spec.sandbox;
  const fault = rule.fault;
  const commit = () => runTool(db, tool, args, { mode: 'commit' });
  const hold = () => sleep(faultDelayMs(rule));
  switch (fault) {
    case 'timeout_before_mutation':
    case 'rate_limited':
    case 'server_error':
    case 'unavailable':
    case 'non_retryable_error':
    case 'auth_denied': {
      await hold();
      const e = faultError(rule);
      const retryAfter = retryAfterSeconds(rule);
      const headers = retryAfter === undefined ? undefined : { 'retry-after': String(retryAfter) };
      return { ...errorOutcome(e.status, e.code, e.message), headers, fault };
    }
    case 'dropped_connection': {
      await hold();
      const message = rule.message ?? 'The connection was closed without a reply.';
      return { status: 0, error: { code: 'DROPPED_CONNECTION', message }, wire: 'dropped', changes: [], fault };
    }
    case 'timeout_after_mutation': {
      const run = await commit();
      await hold();
      const e = faultError(rule);
      return { ...errorOutcome(e.status, e.code, e.message), changes: run.changes, answer: run.answer, fault };
    }
    case 'partial_response':
    case 'malformed_json':
    case 'delay': {
      const run = await commit();
      await hold();
      const wire: Wire = fault === 'partial_response' ? 'truncated' : fault === 'malformed_json' ? 'malformed' : 'json';
      return { ...fromRun(run), wire, fault };
    }
    case 'stale_response': {
      const stale = await staleAnswer(call);
      await hold();
      return { ...stale, fault };
    }
    case 'duplicate_delivery': {
      const run = await commit();
      await hold();
      return { ...fromRun(run), duplicate: true, fault };
    }
    case 'inconsistent_state': {
      const run = await runTool(db, tool, args, { mode: 'first-statement' });
      await hold();
      const e = faultError(rule);
      return { ...errorOutcome(e.status, e.code, e.message), changes: run.changes, fault };
    }
    case 'success_without_effect': {
      const run = await runTool(db, tool, args, { mode: 'rollback' });
      await hold();
      return { ...answerOutcome(run.answer), changes: [], fault };
    }
    case 'empty_result': {
      await hold();
      const many = tool.sql === undefined ? Array.isArray(tool.static) : tool.returns === 'many';
      return { status: 200, result: many ? [] : null, changes: [], fault };
    }
  }
}

/** stale_response: the statements commit on the sandbox; the reply comes from the initial state, rolled back. */
async function staleAnswer(call: ValidCall): Promise<Outcome> {
  const { tool, args } = call;
  const { sandbox, initialState } = call.session.spec;
  const real = await runTool(sandbox, tool, args, { mode: 'commit' });
  // The session refuses to open without an initial state when a rule can fire stale_response.
  const stale = await runTool(initialState!, tool, args, { mode: 'rollback', preconditions: false });
  // When the real call failed there is no effect to be stale about: the caller sees the failure.
  const shown = real.answer.ok ? stale.answer : real.answer;
  return { ...answerOutcome(shown), changes: real.changes, answer: real.answer };
}

/** duplicate_delivery: the same request reaches the tool again, recorded as its own call that no caller sees. */
async function deliverAgain(call: ValidCall): Promise<void> {
  const { session, tool, args } = call;
  const seq = session.nextSeq();
  const started = new Date();
  const t0 = performance.now();
  let outcome: Outcome;
  try {
    outcome = replayStored(call) ?? fromRun(await runTool(session.spec.sandbox, tool, args, { mode: 'commit' }));
  } catch (err) {
    outcome = errorOutcome(500, 'GATEWAY_ERROR', err instanceof Error ? err.message : String(err));
  }
  if (call.key !== undefined && outcome.answer) session.idempotency.keep(call.key, call.argsJson, outcome.answer);
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

/** The record fields that come from the outcome: what the caller saw and what the database did. */
function recordFields(o: Outcome): Pick<CallRecord, 'status' | 'result' | 'error' | 'fault' | 'mutated' | 'replay' | 'changes'> {
  return {
    status: o.status,
    ...(o.error ? { error: o.error } : { result: o.result }),
    ...(o.fault ? { fault: o.fault } : {}),
    mutated: o.changes.length > 0,
    replay: o.replay ?? false,
    changes: o.changes,
  };
}

function fromRun(run: ToolRun): Outcome {
  return { ...answerOutcome(run.answer), changes: run.changes, answer: run.answer };
}

function answerOutcome(answer: ToolAnswer): Omit<Outcome, 'changes'> {
  if (answer.ok) return { status: answer.status, result: answer.result };
  return { status: answer.status, error: { code: answer.code, message: answer.message } };
}

function errorOutcome(status: number, code: string, message: string): Outcome {
  return { status, error: { code, message }, changes: [] };
}

function toReply(o: Outcome): CallReply {
  const headers = { ...(o.headers ?? {}) };
  if (o.replay) headers['idempotent-replayed'] = 'true';
  if (o.wire === 'dropped') return { status: 0, headers, wire: 'dropped' };
  const body = o.error ? { error: o.error } : { result: o.result ?? null };
  return { status: o.status, body, headers, wire: o.wire ?? 'json' };
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
