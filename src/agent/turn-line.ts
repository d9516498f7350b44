// The stdout lines of a command agent in a conversation (docs/agent-protocol.md): a line holding a
// JSON object with a string `reply` is an agent turn; any other line is a log.
import type { AgentResult } from '../model/episode.js';
import { checkAgentResult } from './result.js';

/** One agent turn read from a stdout line: its text, whether it ends the conversation, its result. */
export interface TurnLine {
  reply: string;
  done: boolean;
  /** The line as a result object, or why it is not a valid one (checked when it is the last). */
  reading: { result: AgentResult; resultError?: undefined } | { result?: undefined; resultError: string };
}

/** The agent turn a stdout line holds, or undefined for a log line. */
export function readTurnLine(line: string): TurnLine | undefined {
  const text = line.trim();
  if (!text.startsWith('{')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const fields = value as { reply?: unknown; done?: unknown };
  if (typeof fields.reply !== 'string') return undefined;
  const checked = checkAgentResult(value);
  const reading = checked.result
    ? { result: checked.result }
    : { resultError: `the last reply line: ${checked.resultError}` };
  return { reply: fields.reply, done: fields.done === true, reading };
}
