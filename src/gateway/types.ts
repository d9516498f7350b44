// What the run stage asks of the tool gateway (docs/formats/twin.md and docs/gateway.md).
import type { FaultRule, ModelFaultRule, Tool } from '../config/schema.js';
import type { CallRecord, ModelCallRecord, RefusedCall, Side } from '../model/episode.js';
import type { ModelApi, ModelPrice } from '../model/model-usage.js';
import type { Sandbox } from '../sandbox/types.js';

/** One `models` entry as the gateway forwards it: the real key stays here, never with the agent. */
export interface ModelRoute {
  api: ModelApi;
  /** The provider's base URL (the part the agent's `.../v1` stands for). */
  url: string;
  /** The provider's key, read from api_key_env in the harness's environment; absent: none is sent. */
  key?: string;
  prices: Readonly<Record<string, ModelPrice>>;
  /** The agent's variable names (default OPENAI_BASE_URL/OPENAI_API_KEY or ANTHROPIC_*). */
  env?: { url?: string; key?: string };
}

/** The model side of one episode (docs/models.md). */
export interface ModelSpec {
  providers: Readonly<Record<string, ModelRoute>>;
  /** The scenario's model faults, in scenario order. */
  faults?: readonly ModelFaultRule[];
  /** Past this recorded spend the episode's next call is answered 429 budget_exceeded. */
  episodeUsd?: number;
  /** Told each priced call's cost as it is recorded (the run's spend). */
  onSpend?: (usd: number) => void;
  /** How long a `timeout` fault holds the call before its 504 (default: until the episode ends). */
  timeoutMs?: number;
}

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
  /** The providers this episode's agent may call through the model gateway. */
  models?: ModelSpec;
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
   * The agent's model variables (OPENAI_BASE_URL, OPENAI_API_KEY, ...): this episode's URLs under
   * `/m/TOKEN/NAME` and a key valid only for this episode. Empty without `models`.
   */
  readonly modelEnv: Readonly<Record<string, string>>;
  /** The model calls recorded so far, in arrival order. */
  modelCalls(): ModelCallRecord[];
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
