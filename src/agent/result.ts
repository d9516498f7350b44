// Reading and checking the agent's result object (docs/agent-protocol.md) against its contract,
// AgentResultSchema. A malformed result is a fact about the episode (resultError), never a thrown error.
import { AgentResultSchema } from '../model/agent-result.js';
import type { AgentResult } from '../model/episode.js';
import type { OutputCapture } from './capture.js';

const SNIPPET_CHARS = 200;

/** Either a checked result or the reason there is none. */
export type ResultReading =
  | { result: AgentResult; resultError?: undefined }
  | { result?: undefined; resultError: string };

/** A short quotation of untrusted text for an error message. */
export function snippet(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(one.length > SNIPPET_CHARS ? `${one.slice(0, SNIPPET_CHARS)}...` : one);
}

/** Checks a parsed value against the result contract, keeping only the known fields. */
export function checkAgentResult(value: unknown): ResultReading {
  const parsed = AgentResultSchema.safeParse(value);
  if (parsed.success) return { result: parsed.data };
  // The first problem, in field order (reply, outcome, tool_calls, usage), is the one to fix first.
  return { resultError: parsed.error.issues[0].message };
}

/** Parses JSON text and checks it; `what` names the text in the error ("last line of stdout"). */
export function parseAgentResult(text: string, what: string): ResultReading {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { resultError: `${what} is not JSON: ${snippet(text)}` };
  }
  const checked = checkAgentResult(value);
  return checked.resultError ? { resultError: `${what}: ${checked.resultError}` } : checked;
}

/** The result an agent printed as the last non-empty line of its stdout. */
export function readResultLine(stdout: OutputCapture): ResultReading {
  const last = stdout.lastLine();
  if (last === null) return { resultError: 'stdout is empty: the agent printed no result' };
  if (last.cut) {
    return {
      resultError: `the last line of stdout is longer than the ${stdout.tailCap} bytes the output cap keeps`,
    };
  }
  return parseAgentResult(last.line, 'last line of stdout');
}
