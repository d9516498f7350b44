// What a call came to, between the checks and the reply: the plain data the call path and the
// fault effects hand each other.
import type { FaultRule, Tool } from '../config/schema.js';
import type { CallRecord, RowChange } from '../model/episode.js';
import type { ToolAnswer, ToolRun } from './run-tool.js';
import type { SessionState } from './session.js';

/** How a reply's body travels: as JSON, cut mid-JSON, made invalid, or not at all (socket closed). */
export type Wire = 'json' | 'truncated' | 'malformed' | 'dropped';

export type Args = Record<string, unknown>;
export type ErrorBody = { code: string; message: string };

/** What a call came to, before it becomes a record and a reply. */
export interface CallOutcome {
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
  /** The session cut the request off: no reply goes out (see CallRecord.cutOff). */
  cutOff?: boolean;
  /** The harness failed this call (a SQL error of the twin, a lost connection): the episode cannot be graded. */
  harnessError?: string;
}

/** Everything the call path knows about a call that passed validation. */
export interface ValidCall {
  session: SessionState;
  tool: Tool;
  args: Args;
  argsJson: string;
  via: CallRecord['via'];
  /** The idempotency store key, when the tool has one and the call carries it. */
  key?: string;
}

/** The outcome of a tool run that the caller sees as it is. */
export function fromRun(run: ToolRun): CallOutcome {
  return { ...answerOutcome(run.answer), changes: run.changes, answer: run.answer };
}

/** A tool answer as a result or an error, without changes. */
export function answerOutcome(answer: ToolAnswer): Omit<CallOutcome, 'changes'> {
  if (answer.ok) return { status: answer.status, result: answer.result };
  return { status: answer.status, error: { code: answer.code, message: answer.message } };
}

/** The status a cut-off call is recorded with: the caller got no reply (as nginx's 499). */
export const CUT_OFF_STATUS = 499;

/** A call cut off by its session; `changes` are what the tool did before (none if it never ran). */
export function cutOffOutcome(message: string, changes: RowChange[] = []): CallOutcome {
  return { status: CUT_OFF_STATUS, error: { code: 'CUT_OFF', message }, changes, cutOff: true };
}

/** The error text ("CODE (SQLSTATE xxxxx): message") when the tool's own SQL failed in a way the twin does not declare. */
export function harnessErrorOf(answer: ToolAnswer | undefined): string | undefined {
  if (!answer || answer.ok || !answer.harness) return undefined;
  return `${answer.code}${answer.sqlstate ? ` (SQLSTATE ${answer.sqlstate})` : ''}: ${answer.message}`;
}

/** An error that changed nothing. */
export function errorOutcome(status: number, code: string, message: string): CallOutcome {
  return { status, error: { code, message }, changes: [] };
}
