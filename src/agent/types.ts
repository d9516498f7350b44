// The shapes the agent adapters share (docs/agent-protocol.md).
import type { Side } from '../model/episode.js';

/** What the agent receives on stdin, or in the POST body: the scenario's message and context. */
export interface AgentInput {
  message: string;
  context: Record<string, unknown>;
}

/** The identifiers of one episode, handed to the agent as STATEGATE_* variables or POST fields. */
export interface EpisodeVars {
  toolsUrl: string;
  mcpUrl: string;
  episode: string;
  scenario: string;
  seed: number;
  side: Side;
  /** Only with `database.expose: true`: the episode's own database. */
  databaseUrl?: string;
  /** With `models`: OPENAI_BASE_URL, OPENAI_API_KEY, ... on the model gateway (an episode key, never the real one). */
  modelEnv?: Readonly<Record<string, string>>;
  /** A scenario with `user:`: the agent gets STATEGATE_CONVERSATION=1. */
  conversation?: boolean;
}
