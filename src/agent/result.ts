// Reading and checking the agent's result object (docs/agent-protocol.md). AgentResultSchema is the
// contract: the harness parses with it and schema/agent-result.schema.json is generated from it. A
// malformed result is a fact about the episode (resultError), never a thrown error.
import { z } from 'zod';
import type { AgentResult, Outcome } from '../record.js';
import type { OutputCapture } from './capture.js';

export const OUTCOMES: readonly Outcome[] = ['SUCCESS', 'FAILURE', 'PARTIAL', 'ESCALATED'];
const SNIPPET_CHARS = 200;

/** Either a checked result or the reason there is none. */
export type ResultReading =
  | { result: AgentResult; resultError?: undefined }
  | { result?: undefined; resultError: string };

function describe(value: unknown): string {
  if (value === undefined) return 'none';
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

const usageField = (name: string, description: string) =>
  z
    .number({
      error: (issue) => `"usage.${name}" must be a non-negative number, got ${describe(issue.input)}`,
    })
    .min(0, {
      error: (issue) => `"usage.${name}" must be a non-negative number, got ${describe(issue.input)}`,
    })
    .optional()
    .describe(description);

/**
 * The result object: the last line of a command agent's stdout, or an agent server's response body.
 * Not strict: fields it does not name are ignored (and not kept), so an agent may print more.
 */
export const AgentResultSchema = z
  .object(
    {
      reply: z
        .string({ error: (issue) => `the result must have a string "reply", got ${describe(issue.input)}` })
        .describe("The agent's answer to the user, as the user would read it."),
      outcome: z
        .enum(OUTCOMES as [Outcome, ...Outcome[]], {
          error: (issue) => `"outcome" must be one of ${OUTCOMES.join(', ')}, got ${describe(issue.input)}`,
        })
        .optional()
        .describe(
          'What the agent claims it achieved, upper-case. Graded by outcome and outcome_verified expectations.',
        ),
      tool_calls: z
        .array(z.unknown(), { error: (issue) => `"tool_calls" must be a list, got ${describe(issue.input)}` })
        .optional()
        .describe(
          "The agent's own account of its calls, kept in the record for reading; grading uses the calls the gateway recorded.",
        ),
      usage: z
        .object(
          {
            input_tokens: usageField('input_tokens', 'Model input tokens of the episode.'),
            output_tokens: usageField('output_tokens', 'Model output tokens of the episode.'),
            cost_usd: usageField('cost_usd', 'What the episode cost, in US dollars.'),
          },
          { error: (issue) => `"usage" must be an object, got ${describe(issue.input)}` },
        )
        .optional()
        .describe('What the episode spent; the report shows the mean per side.'),
    },
    { error: (issue) => `the result must be a JSON object, got ${describe(issue.input)}` },
  )
  .describe('The one result an agent gives per episode.');

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
