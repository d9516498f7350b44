// The agent's result object (docs/agent-protocol.md), a contract: the harness parses with this
// schema and schema/agent-result.schema.json is generated from it. The messages quote what the agent
// printed, because they are what the report shows for a malformed result.
import { z } from 'zod';
import type { Outcome } from './episode.js';

export const OUTCOMES: readonly Outcome[] = ['SUCCESS', 'FAILURE', 'PARTIAL', 'ESCALATED'];

function describe(value: unknown): string {
  if (value === undefined) return 'none';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string')
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  return typeof value;
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
