// What the run stage asks of the tool gateway (docs/formats/twin.md and docs/gateway.md).
import type { FaultRule, Tool } from '../config/schema.js';
import type { CallRecord, RefusedCall, Side } from '../model/episode.js';
import type { Sandbox } from '../sandbox/types.js';

/** What one episode's tool session needs. */
export interface SessionSpec {
  episode: string;
  scenario: string;
  side: Side;
  seed: number;
  /** The tools the scenario allows (already filtered), in suite order. */
  tools: Tool[];
  /**
   * Every tool of the suite: a call to one the scenario does not allow gets 403 TOOL_NOT_ALLOWED
   * (and its risk in the record) instead of 404 UNKNOWN_TOOL. Optional: without it, both are 404.
   */
  suiteTools?: Tool[];
  faults: FaultRule[];
  sandbox: Sandbox;
  /** Initial-state reader for stale_response: same template + scenario state, never written. */
  initialState?: Sandbox;
  /**
   * Aborts when the episode's time is up (its agent timeout passed, or the run was interrupted):
   * requests in flight are cut off at once and recorded so, and later ones are cut off on arrival.
   */
  deadline?: AbortSignal;
  /** In a conversation: the agent turn in progress, which each call is tagged with on arrival. */
  turn?: () => number;
}

/** One episode's view of the gateway. */
export interface EpisodeSession {
  /** `http://127.0.0.1:PORT/e/TOKEN` (128-bit random token). */
  readonly toolsUrl: string;
  /** The same tools as an MCP server (streamable HTTP). */
  readonly mcpUrl: string;
  /** The calls recorded so far, in sequence order. */
  calls(): CallRecord[];
  /**
   * Ends the session: later requests to its URLs get 404; in-flight calls get a short grace to
   * finish, then are cut off (recorded with `cutOff: true`).
   */
  close(): Promise<void>;
}

export interface Gateway {
  readonly port: number;
  open(spec: SessionSpec): EpisodeSession;
  /** Requests to unknown episode URLs, refused with 404: the first ones (up to a limit) in full. */
  refused(): RefusedCall[];
  /** How many requests were refused in all. */
  refusedCount(): number;
  /** How much the gateway holds: open sessions, remembered closed tokens, refused requests kept. */
  sizes(): { sessions: number; closedTokens: number; refused: number };
  close(): Promise<void>;
}
