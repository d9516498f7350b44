// The plain data that flows between the stages (docs/architecture.md): what an episode recorded,
// what grading made of it. Everything here is JSON-serialisable; report.json stores it as is.
import type { ModelUsage } from './model-usage.js';

export type Side = 'base' | 'head';
export type Row = Record<string, unknown>;

/** One row operation, net over the episode (or over one tool call). */
export interface RowChange {
  table: string;
  op: 'insert' | 'update' | 'delete';
  /** Primary-key values; null for a table without a primary key (diffed as a multiset). */
  key: Row | null;
  before?: Row;
  after?: Row;
}

/** The row diff of one table, initial vs final, by primary key. */
export interface TableDiff {
  table: string;
  primaryKey: string[] | null;
  /**
   * Additive: each column's type (pg_type.typname, `_int4` an array), so a row's values compare by
   * their column's type as query results do. Absent in older records: compared by form.
   */
  columnTypes?: Record<string, string>;
  inserted: RowChange[];
  updated: RowChange[];
  deleted: RowChange[];
}

/** The state of an episode's database at the end, against its initial state. */
export interface StateDiff {
  /** Only tables with at least one net change. */
  tables: Record<string, TableDiff>;
  /** A content fingerprint of every table in the final state (sha256 hex, order-independent). */
  fingerprints: Record<string, string>;
}

/** One call, as the gateway recorded it on the tool's side. */
export interface CallRecord {
  seq: number;
  tool: string;
  /** Canonical arguments: keys sorted recursively. */
  args: unknown;
  /** HTTP status the caller saw (0 when the connection was dropped). */
  status: number;
  result?: unknown;
  error?: { code: string; message: string };
  fault?: string;
  /** Whether this call changed the database. */
  mutated: boolean;
  /** An idempotent replay: same key, same arguments, stored result, no second effect. */
  replay: boolean;
  effectKey?: string;
  /** The tool's risk from the twin file. */
  risk: 'read' | 'write' | 'write_irreversible';
  startedAt: string;
  durationMs: number;
  /** Net row changes of this call. */
  changes: RowChange[];
  /** How it came in. */
  via: 'http' | 'mcp';
  /**
   * The call never got its reply: the episode ended (deadline, or the agent gone) or the client
   * closed the connection while it was in flight. Then `status` is 499 and `error.code` CUT_OFF;
   * `args` is null when the body had not fully arrived, and `changes` holds whatever the tool did.
   */
  cutOff?: true;
  /**
   * Additive: the harness failed this call (the twin's SQL raised an error it does not declare as
   * `not_found`, a precondition or under `errors`, or the gateway lost its database). The episode is then not graded.
   */
  harnessError?: string;
  /**
   * Additive, in a conversation: the agent turn the call was made in, i.e. the number of the last
   * user turn the harness had sent when the gateway received the call (user turn n opens agent turn n).
   */
  turn?: number;
}

/**
 * One model call, as the model gateway recorded it between the agent and the provider (docs/models.md).
 * Tokens are the provider's own report (streamed usage included); cost is priced from `models.*.prices`.
 */
export interface ModelCallRecord {
  seq: number;
  /** The `models` entry the call went to. */
  provider: string;
  /** The path under the provider's url (`/chat/completions`, `/messages`). */
  path: string;
  /** The model the request asked for (the response's when it names one), or null when neither did. */
  model: string | null;
  stream: boolean;
  /** The status the agent saw (0 when the connection was dropped). */
  status: number;
  startedAt: string;
  /** From the request's arrival to the response's last byte. */
  latencyMs: number;
  /** From the request's arrival to the response's first byte, when one was sent. */
  firstByteMs?: number;
  /** As the provider reported it; null when it reported none (a fault, an error, no usage in the body). */
  usage: ModelUsage | null;
  /** USD at the suite's prices; null when the model has no price or nothing was reported. */
  costUsd: number | null;
  /** A scenario fault or the gateway's own refusal (`budget_exceeded`, `wrong_key`). */
  fault?: string;
  /** Why the call did not reach the provider or did not finish (the provider unreachable, the agent gone). */
  error?: string;
  /**
   * The gateway could not reach the provider (the agent got 502): what the agent did next says
   * nothing about it, so the episode is not graded (infraError, stage gateway).
   */
  unreachable?: true;
}

/** A call that was refused before reaching any tool (wrong episode URL): kept for the record. */
export interface RefusedCall {
  at: string;
  path: string;
  status: number;
  reason: string;
}

export type Outcome = 'SUCCESS' | 'FAILURE' | 'PARTIAL' | 'ESCALATED';

/** The result object the agent printed (docs/agent-protocol.md). */
export interface AgentResult {
  reply: string;
  outcome?: Outcome;
  tool_calls?: unknown[];
  usage?: { input_tokens?: number; output_tokens?: number; cost_usd?: number };
}

/** How the agent process (or server request) ended. */
export interface AgentRun {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  /** Capped; `truncated` says when. */
  stdout: string;
  stderr: string;
  truncated: boolean;
  result?: AgentResult;
  /** Why the result could not be read, when it could not. */
  resultError?: string;
}

/** A query an expectation asked about the final state, run by the harness after the episode. */
export interface QueryResult {
  sql: string;
  rows?: Row[];
  /**
   * Additive: the result's columns and their type names (pg_type.typname, `_int4` for an array of
   * int4), which decide how a value compares (see expectations/typed.ts). Absent in older records,
   * whose values then compare by their form alone.
   */
  fields?: { name: string; type: string }[];
  error?: string;
}

/** An error outside the agent: the episode cannot be graded (docs/statistics.md, `incomplete`). */
export interface InfraError {
  /**
   * `tool`: a tool call failed inside the harness (see CallRecord.harnessError); `budget`:
   * budget.run_usd was spent before this episode started (not run again); `user-simulator`: the
   * model-played user could not answer.
   */
  stage:
    | 'sandbox'
    | 'gateway'
    | 'tool'
    | 'agent-start'
    | 'capture'
    | 'judge'
    | 'interrupted'
    | 'user-simulator'
    | 'budget';
  message: string;
  /**
   * Additive, stage `tool`: a SQL error the calls provoked (their values, data or concurrency: any
   * SQLSTATE but the server's own failures). Met by the head only, it is the head's doing and must
   * not turn a failure into `incomplete`.
   */
  provoked?: true;
  /** Additive, stage `sandbox`: the scenario's state.sql ran past the episode's timeout (not run again). */
  timedOut?: true;
}

/** One turn of a conversation, as the harness sent or read it (never as the agent reports it). */
export interface ConversationTurn {
  role: 'user' | 'agent';
  /** User turn n opens agent turn n: the scenario's message is user turn 1. */
  turn: number;
  text: string;
  /** When the harness sent (user) or read (agent) it, ISO 8601. */
  at: string;
  /** User turns: the facts this turn gave, in `facts` order (a fact is learned at the first that gives it). */
  facts?: string[];
}

/**
 * How a conversation ended: the user (script rule 5, or the simulator's stop), the agent (`done:
 * true`), cut at max_turns, the agent gone before either (stdout closed or the process exited), its
 * timeout, or the user simulator failing (an error outside the agent).
 */
export type ConversationEnd = 'user' | 'agent' | 'max_turns' | 'agent_left' | 'timeout' | 'simulator_error';

/** A user simulator's spend, apart from the agent's (docs/agent-protocol.md). */
export interface SimulatorUsage {
  provider: string;
  model: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  /** At the suite's prices; absent when the model has no price. */
  costUsd?: number;
  /** Turns answered from the run's cache (the other side said the same thing first). */
  cached: number;
}

/** The conversation of an episode whose scenario has `user:`. */
export interface Conversation {
  /** User and agent turns in the order they happened. */
  turns: ConversationTurn[];
  maxTurns: number;
  end: ConversationEnd;
  /** Each fact learned, with the user turn that first gave it. */
  learned: Record<string, number>;
  /** Why the conversation could not go on, for `agent_left`, `timeout` and `simulator_error`. */
  error?: string;
  /** A model-played user's spend. */
  simulator?: SimulatorUsage;
}

/** Everything one episode left behind. Grading is a pure function of this and the scenario. */
export interface EpisodeRecord {
  episode: string;
  scenario: string;
  side: Side;
  repeat: number;
  seed: number;
  calls: CallRecord[];
  refused: RefusedCall[];
  agent: AgentRun;
  diff: StateDiff;
  /** Keyed by expectation id (for outcome_verified: `${id}`). */
  queries: Record<string, QueryResult>;
  infraError?: InfraError;
  timings: Record<string, number>;
  /** The pinned content this episode ran: the suite and the scenario's content hash. */
  pin?: { suite: string; scenario: string };
  /** Additive: the agent's model calls through the model gateway, in arrival order (absent: none made). */
  modelCalls?: ModelCallRecord[];
  /** Additive: the transcript of a scenario with `user:`, written by the harness. */
  conversation?: Conversation;
}

/** The id and kind of the implicit critical expectation every episode has: the agent ran to a valid result. */
export const COMPLETED = 'completed';

/**
 * What one expectation came to in one episode. A verdict is the gate's (PASS, WARN, BLOCK); an
 * expectation gets a grade (the file field keeps its name `verdict` for the files already written).
 */
export type ResultGrade = 'pass' | 'fail' | 'error';

/** Failure labels an explanation names (issue: explanations from evidence). */
/** Every failure label; the schemas that read records and reports check against this list. */
export const FAILURE_LABELS = [
  'STATE_MISMATCH',
  'DUPLICATE_EFFECT',
  'ORDER_VIOLATION',
  'FORBIDDEN_CALL',
  'EXTRA_EFFECT',
  'MISSING_EFFECT',
  'HALLUCINATED_SUCCESS',
  'INCOMPLETE_RUN',
  'TOO_MANY_CALLS',
  'TOO_MANY_RETRIES',
  'WRONG_OUTCOME',
  'REPLY_MISMATCH',
  'JUDGE_FAIL',
  'EVALUATION_ERROR',
  'TOO_MANY_TURNS',
  'WRONG_ENDING',
] as const;

export type FailureLabel = (typeof FAILURE_LABELS)[number];

/** The result of one expectation on one episode. */
export interface ExpectationResult {
  id: string;
  kind: string;
  critical: boolean;
  verdict: ResultGrade;
  label?: FailureLabel;
  /** One plain sentence: what was expected, what the evidence shows. */
  message: string;
  expected?: unknown;
  actual?: unknown;
}

/** A graded episode: the record plus its expectation results (the implicit `completed` first). */
export interface GradedEpisode {
  record: EpisodeRecord;
  results: ExpectationResult[];
  /** Every expectation passed. */
  passed: boolean;
}
