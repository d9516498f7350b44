// What each fault does (docs/formats/twin.md): the dependency's fact in the database, the caller's
// fact in the outcome. The table in docs/gateway.md follows this switch case by case.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultRule } from '../config/schema.js';
import { faultDelayMs, faultError, retryAfterSeconds } from './faults.js';
import {
  answerOutcome,
  type CallOutcome,
  errorOutcome,
  fromRun,
  harnessErrorOf,
  type ValidCall,
  type Wire,
} from './outcome.js';
import { runTool } from './run-tool.js';

/** What each fault makes of the call: what the dependency does, and what the caller sees. */
export async function withFault(call: ValidCall, rule: FaultRule): Promise<CallOutcome> {
  const { tool, args } = call;
  const db = call.session.spec.sandbox;
  const fault = rule.fault;
  const commit = () => runTool(db, tool, args, { mode: 'commit' });
  // A cut-off session ends the hold at once: the reply will not be sent anyway.
  const hold = () =>
    sleep(faultDelayMs(rule), undefined, { signal: call.session.cutoff }).catch(() => undefined);
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
      return {
        status: 0,
        error: { code: 'DROPPED_CONNECTION', message },
        wire: 'dropped',
        changes: [],
        fault,
      };
    }
    case 'timeout_after_mutation': {
      const run = await commit();
      await hold();
      const e = faultError(rule);
      return {
        ...errorOutcome(e.status, e.code, e.message),
        changes: run.changes,
        answer: run.answer,
        fault,
      };
    }
    case 'partial_response':
    case 'malformed_json':
    case 'delay': {
      const run = await commit();
      await hold();
      const wire: Wire =
        fault === 'partial_response' ? 'truncated' : fault === 'malformed_json' ? 'malformed' : 'json';
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
      return {
        ...errorOutcome(e.status, e.code, e.message),
        changes: run.changes,
        fault,
        harnessError: harnessErrorOf(run.answer),
      };
    }
    case 'success_without_effect': {
      const run = await runTool(db, tool, args, { mode: 'rollback' });
      await hold();
      return { ...answerOutcome(run.answer), changes: [], fault, harnessError: harnessErrorOf(run.answer) };
    }
    case 'empty_result': {
      await hold();
      const many = tool.sql === undefined ? Array.isArray(tool.static) : tool.returns === 'many';
      return { status: 200, result: many ? [] : null, changes: [], fault };
    }
  }
}

/** stale_response: the statements commit on the sandbox; the reply comes from the initial state, rolled back. */
async function staleAnswer(call: ValidCall): Promise<CallOutcome> {
  const { tool, args } = call;
  const { sandbox, initialState } = call.session.spec;
  const real = await runTool(sandbox, tool, args, { mode: 'commit' });
  // The session refuses to open without an initial state when a rule can fire stale_response.
  const stale = await runTool(initialState!, tool, args, { mode: 'rollback', preconditions: false });
  // When the real call failed there is no effect to be stale about: the caller sees the failure.
  const shown = real.answer.ok ? stale.answer : real.answer;
  return { ...answerOutcome(shown), changes: real.changes, answer: real.answer };
}
