// Reading and checking the agent's result object (docs/agent-protocol.md). A malformed result is a
// fact about the episode (resultError), never a thrown error.
import type { AgentResult, Outcome } from '../record.js';
import type { OutputCapture } from './capture.js';

const OUTCOMES: readonly Outcome[] = ['SUCCESS', 'FAILURE', 'PARTIAL', 'ESCALATED'];
const USAGE_FIELDS = ['input_tokens', 'output_tokens', 'cost_usd'] as const;
const SNIPPET_CHARS = 200;

/** Either a checked result or the reason there is none. */
export type ResultReading =
  | { result: AgentResult; resultError?: undefined }
  | { result?: undefined; resultError: string };

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string')
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  return typeof value;
}

/** A short quotation of untrusted text for an error message. */
export function snippet(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(one.length > SNIPPET_CHARS ? `${one.slice(0, SNIPPET_CHARS)}...` : one);
}

/** Checks a parsed value against the result contract, keeping only the known fields. */
export function checkAgentResult(value: unknown): ResultReading {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { resultError: `the result must be a JSON object, got ${describe(value)}` };
  }
  const v = value as Record<string, unknown>;
  if (typeof v.reply !== 'string') {
    return {
      resultError: `the result must have a string "reply", got ${'reply' in v ? describe(v.reply) : 'none'}`,
    };
  }
  const result: AgentResult = { reply: v.reply };
  if (v.outcome !== undefined) {
    if (!OUTCOMES.includes(v.outcome as Outcome)) {
      return { resultError: `"outcome" must be one of ${OUTCOMES.join(', ')}, got ${describe(v.outcome)}` };
    }
    result.outcome = v.outcome as Outcome;
  }
  if (v.tool_calls !== undefined) {
    if (!Array.isArray(v.tool_calls))
      return { resultError: `"tool_calls" must be a list, got ${describe(v.tool_calls)}` };
    result.tool_calls = v.tool_calls;
  }
  if (v.usage !== undefined) {
    if (typeof v.usage !== 'object' || v.usage === null || Array.isArray(v.usage)) {
      return { resultError: `"usage" must be an object, got ${describe(v.usage)}` };
    }
    const u = v.usage as Record<string, unknown>;
    const usage: NonNullable<AgentResult['usage']> = {};
    for (const field of USAGE_FIELDS) {
      const n = u[field];
      if (n === undefined) continue;
      if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) {
        return { resultError: `"usage.${field}" must be a non-negative number, got ${describe(n)}` };
      }
      usage[field] = n;
    }
    result.usage = usage;
  }
  return { result };
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
