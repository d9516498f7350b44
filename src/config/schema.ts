// The file formats of docs/formats, as zod schemas. These are the source of truth:
// the TypeScript types below are inferred from them and schema/*.json is generated from them.
import { z } from 'zod';
import { JUDGE_THRESHOLD_DEFAULT } from '../expectations/kinds/judge.js';
import { COMPARATOR_NAMES, QueryCheck } from '../expectations/query-check.js';
import {
  EXPECTATION_KINDS,
  EXPECTATION_SCHEMAS,
  type ExpectationKind,
  type ExpectationOf,
  type Expectation as ExpectationType,
  expectationKind,
} from '../expectations/registry.js';
import { CASE_CLASSES, DEFAULT_GATE, GATE_CLASSES } from '../model/classes.js';
import { ENGINE_NAMES } from '../model/engine.js';
import type { ScenarioLines } from '../model/report.js';

// The expectation kinds are declared in expectations/; the file formats re-export what they name.
export {
  COMPARATOR_NAMES,
  EXPECTATION_KINDS,
  EXPECTATION_SCHEMAS,
  type ExpectationKind,
  type ExpectationOf,
  expectationKind,
  JUDGE_THRESHOLD_DEFAULT,
  QueryCheck,
};

/** The smallest bare number a duration takes: below it, `timeout: 30` almost surely meant seconds. */
export const MIN_BARE_DURATION_MS = 1000;

/** What a bare number under MIN_BARE_DURATION_MS says back: the milliseconds it is, and the fix. */
export function bareDurationMessage(n: unknown): string {
  if (typeof n !== 'number' || n <= 0) return `expected a positive duration such as 30s, got ${String(n)}`;
  return `${n} is ${n} ms; did you mean ${n}s? A bare number is milliseconds and must be at least ${MIN_BARE_DURATION_MS}: write ${n}s, or ${n}ms if you mean milliseconds`;
}

/**
 * A duration: a string with a unit (ms, s, m), or a bare number of milliseconds of at least
 * MIN_BARE_DURATION_MS (a bare 30 is refused, not run as 30 ms).
 */
export const Duration = z.union([
  z
    .number()
    .int()
    .min(MIN_BARE_DURATION_MS, { error: (issue) => bareDurationMessage(issue.input) }),
  z.string().regex(/^\d+(\.\d+)?\s*(ms|s|m)$/, 'a duration such as 500ms, 60s or 2m'),
]);

/** Converts a Duration to milliseconds. */
export function durationMs(value: z.infer<typeof Duration>): number {
  if (typeof value === 'number') return value;
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m)$/.exec(value)!;
  const n = Number(m[1]);
  return Math.round(m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : n * 60_000);
}

const StringList = z.array(z.string().min(1));
const OneOrMany = z.union([z.string().min(1), StringList]).transform((v) => (Array.isArray(v) ? v : [v]));

// ---------------------------------------------------------------- stategate.yml (docs/formats/stategate.md)

export const AgentConfig = z
  .strictObject({
    command: z
      .string()
      .min(1)
      .optional()
      .describe('Run with /bin/sh -c in the side checkout, once per episode.'),
    url: z
      .string()
      .min(1)
      .optional()
      .describe(
        'A long-lived agent server: POST per episode. With agent.serve, write the port as {port} (http://127.0.0.1:{port}/): each side gets a free port of its own.',
      ),
    serve: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Starts the agent server once per side (with agent.url); it listens on the port in PORT. A URL that answers before it started is refused.',
      ),
    setup: z.string().min(1).optional().describe('Run once per side before its first episode.'),
    timeout: Duration.default('60s').describe('Per episode.'),
    env: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String)).default({}),
    pass_env: StringList.default([]).describe('Variables passed through from the harness environment.'),
    isolation: z
      .enum(['process', 'container', 'none'])
      .default('process')
      .describe(
        "process: a bubblewrap sandbox on this machine (namespaces where bubblewrap is missing); container: a container with no network but the gateway; none, honoured from the base's stategate.yml only: where neither can be had, the head's agent still runs, as the harness's user (without it, it does not run).",
      ),
    network: z
      .enum(['own', 'host'])
      .default('own')
      .describe(
        "own: a network namespace with only a loopback, the gateway reached through forwarded sockets; host, honoured from the base's stategate.yml only: the machine's network (every server of the machine reachable), said in the report.",
      ),
    image: z.string().min(1).optional().describe('isolation: container: the image the agent runs in.'),
    dockerfile: z
      .string()
      .min(1)
      .optional()
      .describe(
        'isolation: container: a Dockerfile in the checkout to build the image from (instead of image).',
      ),
  })
  .refine((a) => Boolean(a.command) !== Boolean(a.url), {
    message: 'exactly one of agent.command or agent.url is required',
  })
  .superRefine((a, ctx) => {
    if (a.image && a.dockerfile)
      ctx.addIssue({
        code: 'custom',
        path: ['dockerfile'],
        message: 'give agent.image or agent.dockerfile, not both',
      });
    if (a.isolation !== 'container') return;
    if (!a.image && !a.dockerfile)
      ctx.addIssue({
        code: 'custom',
        path: ['isolation'],
        message:
          'agent.isolation: container needs agent.image or agent.dockerfile (the image the agent runs in)',
      });
    if (a.url && !a.serve)
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message:
          'agent.isolation: container with agent.url needs agent.serve (the server runs in the container)',
      });
  });

export const DatabaseConfig = z.strictObject({
  engine: z.enum(['auto', ...ENGINE_NAMES]).default('auto'),
  url: z.string().optional().describe('postgres: a server where the harness may CREATE DATABASE.'),
  image: z.string().default('postgres:16-alpine').describe('testcontainers image.'),
  schema: StringList.default([]).describe('SQL files applied in order to build the template.'),
  fixtures: StringList.default([]).describe('.sql files, or .yaml/.json rows: { table: [ {col: value} ] }.'),
  expose: z.boolean().default(false).describe('Give the agent DATABASE_URL of its own episode database.'),
});

export const CaseClassName = z.enum(CASE_CLASSES);
export const GateClass = z.enum(GATE_CLASSES);

/**
 * The repeats of a stategate.yml that does not say: adaptive, 7 to 32 per side. The cheapest range
 * whose exact error rates meet the targets (false BLOCK <= 5% for unchanged agents failing 0%, 5%
 * and 20% of runs; detection >= 90% of 0% -> 30% and 5% -> 40%; fewer episodes than fixed N = 20)
 * with room for the benchmark's sampling error; bench/decisions prints and checks them.
 */
export const DEFAULT_REPEATS = { min: 7, max: 32 } as const;

export const Repeats = z.union([
  z.number().int().min(1).max(1000),
  z.strictObject({ min: z.number().int().min(1), max: z.number().int().min(1) }),
]);

export const JudgeConfig = z.strictObject({
  url: z.string().min(1).describe('An OpenAI-compatible chat completions base URL.'),
  model: z.string().min(1),
  api_key_env: z
    .string()
    .optional()
    .describe('The variable (set for the harness) holding the key for the judge, never passed to an agent.'),
  timeout: Duration.default('30s'),
  calibration: z
    .string()
    .min(1)
    .optional()
    .describe(
      'The file `stategate judge calibrate` writes (default judge-calibration.json beside this file, when it exists).',
    ),
});

/** A model's prices in USD per million tokens; a model not listed has an unknown cost. */
export const ModelPrice = z.strictObject({
  input: z.number().min(0),
  output: z.number().min(0),
  cached_input: z.number().min(0).optional().describe('Cached input tokens (default: the input price).'),
});

/** The provider APIs the model gateway forwards; each names the variables its official SDKs read. */
export const MODEL_APIS = ['openai', 'anthropic'] as const;

export const ModelProvider = z.strictObject({
  api: z
    .enum(MODEL_APIS)
    .describe('openai: any path under url (chat completions, responses, embeddings); anthropic: messages.'),
  url: z
    .string()
    .regex(/^https?:\/\/[^\s/]+/, 'an http(s) URL')
    .describe('The provider base URL (https://api.openai.com/v1), or any compatible server.'),
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
    .optional()
    .describe("The harness's variable holding the provider key; never passed to an agent."),
  prices: z.record(z.string().min(1), ModelPrice).default({}),
  env: z
    .strictObject({
      url: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
        .optional(),
      key: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
        .optional(),
    })
    .optional()
    .describe("Renames the agent's variables (default OPENAI_BASE_URL/OPENAI_API_KEY or ANTHROPIC_*)."),
});

export const BudgetConfig = z
  .strictObject({
    run_usd: z
      .number()
      .positive()
      .optional()
      .describe('Both sides together: past it no episode starts and the cases left are incomplete.'),
    episode_usd: z
      .number()
      .positive()
      .optional()
      .describe("Past it the episode's next model call is answered 429 budget_exceeded."),
  })
  .describe('What the agents may spend on models, from the recorded cost.');

export const UserSimulatorConfig = z.strictObject({
  model: z
    .string()
    .regex(/^[^/\s]+\/.+$/, 'PROVIDER/MODEL, with PROVIDER one of models')
    .describe('PROVIDER/MODEL: a name of models and the model it serves.'),
  timeout: Duration.default('30s'),
});

/** Per table, columns left out of the base/head state differences (volatile values such as `DEFAULT now()`). */
export const IgnoreColumns = z
  .record(z.string().min(1), z.array(z.string().min(1)).min(1))
  .describe(
    'Per table, columns whose values are left out of the state differences between base and head (e.g. audit_log: [at]); expectations that name them still read them.',
  );

export const StategateConfig = z.strictObject({
  version: z.literal(1),
  agent: AgentConfig,
  database: DatabaseConfig.default({
    engine: 'auto',
    image: 'postgres:16-alpine',
    schema: [],
    fixtures: [],
    expose: false,
  }),
  twins: OneOrMany.default(['twins/*.yaml']),
  scenarios: OneOrMany.default(['scenarios/**/*.yaml']),
  repeats: Repeats.default({ ...DEFAULT_REPEATS }),
  pass_k: z
    .array(z.number().int().min(1).max(1000))
    .min(1)
    .optional()
    .describe("The k of pass@k and pass^k in the report (default: 1 and each side's number of repeats)."),
  concurrency: z.number().int().min(1).max(256).default(4),
  gate: z
    .strictObject({
      block: z.array(GateClass).default(() => [...DEFAULT_GATE.block]),
      warn: z.array(GateClass).default(() => [...DEFAULT_GATE.warn]),
    })
    .default(() => ({ block: [...DEFAULT_GATE.block], warn: [...DEFAULT_GATE.warn] })),
  judge: JudgeConfig.optional(),
  models: z
    .record(z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'a lowercase name'), ModelProvider)
    .default({})
    .describe('Providers the agent reaches through the model gateway, which holds their keys.'),
  budget: BudgetConfig.optional(),
  user_simulator: UserSimulatorConfig.optional().describe(
    'Who plays the user of scenarios with user.model: true.',
  ),
  ignore_columns: IgnoreColumns.optional(),
});

// ---------------------------------------------------------------- twin files (docs/formats/twin.md)

export const ErrorReply = z.strictObject({
  status: z.number().int().min(400).max(599),
  code: z.string().min(1),
  message: z.string().optional().describe('May use {arg} placeholders.'),
});

/** The tool error a SQLSTATE raised by the tool's SQL stands for; the message is the one raised. */
export const RaisedError = z.strictObject({
  status: z.number().int().min(400).max(599),
  code: z.string().min(1),
});

export const TwinTool = z
  .strictObject({
    description: z.string().default(''),
    risk: z.enum(['read', 'write', 'write_irreversible']).default('read'),
    input: z
      .record(z.string(), z.unknown())
      .default({ type: 'object', properties: {} })
      .describe('JSON Schema of the arguments.'),
    sql: z.string().min(1).optional().describe('Statements with :name parameters, run in one transaction.'),
    static: z.unknown().optional().describe('A fixed result instead of SQL.'),
    returns: z.enum(['one', 'many', 'none']).default('many'),
    not_found: ErrorReply.optional().describe('Returned when returns: one finds no row.'),
    idempotency_key: z.string().min(1).optional().describe('The argument that makes a retry safe.'),
    effect_key: z.string().min(1).optional().describe('Names the effect, e.g. "refund:{order_id}".'),
    preconditions: z.array(z.strictObject({ query: z.string().min(1), error: ErrorReply })).default([]),
    errors: z
      .record(z.string().regex(/^[0-9A-Z]{5}$/, 'a SQLSTATE (five digits or capital letters)'), RaisedError)
      .optional()
      .describe(
        'SQLSTATEs the tool SQL raises on purpose (RAISE ... USING ERRCODE), each the tool error it stands for; the raised MESSAGE is the message.',
      ),
  })
  .refine((t) => (t.sql === undefined) !== (t.static === undefined), {
    message: 'a tool has exactly one of sql or static',
  });

export const TwinFile = z.strictObject({
  tools: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]*$/, 'a tool name'), TwinTool),
});

// ---------------------------------------------------------------- scenario files (docs/formats/scenario.md)

export const FAULT_NAMES = [
  'timeout_before_mutation',
  'timeout_after_mutation',
  'rate_limited',
  'server_error',
  'unavailable',
  'non_retryable_error',
  'auth_denied',
  'dropped_connection',
  'partial_response',
  'malformed_json',
  'delay',
  'stale_response',
  'duplicate_delivery',
  'inconsistent_state',
  'success_without_effect',
  'empty_result',
] as const;
export const FaultName = z.enum(FAULT_NAMES);

export const FaultWhen = z
  .strictObject({
    call: z.number().int().min(1).optional().describe('The n-th call of the tool (1-based).'),
    calls: z.array(z.number().int().min(1)).optional(),
    first: z.number().int().min(1).optional().describe('The first n calls.'),
    every: z.literal(true).optional(),
    args: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Calls whose arguments include these values.'),
    probability: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe('Drawn from a hash of seed, rule, tool, call number.'),
  })
  .default({ every: true });

export const FaultRule = z.strictObject({
  tool: z.string().min(1),
  when: FaultWhen,
  fault: FaultName,
  message: z.string().optional(),
  delay_ms: z.number().int().min(0).max(600_000).optional(),
  retry_after: z.number().int().min(0).optional().describe('Seconds, for rate_limited and unavailable.'),
});

/** Faults a model call can meet (docs/models.md): what the provider would do, shown to the agent. */
export const MODEL_FAULT_NAMES = [
  'rate_limited',
  'server_error',
  'unavailable',
  'timeout',
  'dropped_connection',
  'malformed_json',
  'delay',
] as const;
export const ModelFaultName = z.enum(MODEL_FAULT_NAMES);

export const ModelFaultRule = z.strictObject({
  model: z.string().min(1).describe('A name of models in stategate.yml: the provider whose calls meet it.'),
  when: FaultWhen.describe(
    "As for tools; the n-th call counts this provider's calls, and args matches the request body.",
  ),
  fault: ModelFaultName,
  message: z.string().optional(),
  delay_ms: z.number().int().min(0).max(600_000).optional(),
  retry_after: z.number().int().min(0).optional().describe('Seconds, for rate_limited and unavailable.'),
});

/**
 * One expectation. The kind is the one key of EXPECTATION_KINDS it carries; the loader picks the
 * member schema by that key so errors name the right fields instead of listing every union member.
 * Each kind is declared in one module of expectations/kinds/ and listed in expectations/registry.ts.
 */
export const Expectation = z.union(
  Object.values(EXPECTATION_SCHEMAS) as unknown as [z.ZodTypeAny, ...z.ZodTypeAny[]],
);

/** What the user can be asked for (docs/formats/scenario.md, conversations). */
export const UserFact = z.strictObject({
  value: z
    .union([z.string().min(1), z.number()])
    .describe('The fact itself: a model-played user gave it when one of its turns contains this.'),
  asked: z
    .array(z.string().min(1))
    .min(1)
    .optional()
    .describe(
      'Phrases that ask for it (case-insensitive, on word boundaries; /.../ is a regular expression). Required for the scripted user.',
    ),
  reply: z.string().min(1).optional().describe("The scripted user's answer when asked (default: the value)."),
});

/** The default number of agent turns before a conversation is cut. */
export const DEFAULT_MAX_TURNS = 10;

/** A simulated user: the scenario is a conversation (docs/agent-protocol.md). */
export const UserSpec = z.strictObject({
  facts: z
    .record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'a fact name'), UserFact)
    .default({})
    .describe('What the user knows, given only when an agent turn asks for it.'),
  say: z
    .array(z.string().min(1))
    .default([])
    .describe('Scripted turns, sent in order when an agent turn asks for no fact.'),
  unknown: z
    .string()
    .min(1)
    .default("I don't know.")
    .describe('The answer to a question (an agent turn with "?") that asks for no fact.'),
  max_turns: z
    .number()
    .int()
    .min(1)
    .max(100)
    .default(DEFAULT_MAX_TURNS)
    .describe('Agent turns; past it the conversation is cut (and `completed` fails).'),
  model: z.boolean().default(false).describe('true: user_simulator plays the user instead of the script.'),
  instructions: z
    .string()
    .min(1)
    .optional()
    .describe('For a model-played user: who the user is and what they want.'),
});

export const ScenarioFile = z.strictObject({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]*$/, 'lowercase letters, digits and dashes, starting with a letter or digit'),
  description: z.string().default(''),
  tags: z.array(z.string()).default([]),
  state: z
    .strictObject({
      rows: z.record(z.string(), z.array(z.record(z.string(), z.unknown()))).default({}),
      sql: OneOrMany.optional(),
    })
    .default({ rows: {} }),
  input: z.strictObject({
    message: z.string(),
    context: z.record(z.string(), z.unknown()).default({}),
  }),
  user: UserSpec.optional().describe('A simulated user: the scenario is a conversation.'),
  tools: z.array(z.string().min(1)).optional().describe('Allowed tools; default all.'),
  faults: z.array(z.union([FaultRule, ModelFaultRule])).default([]),
  expect: z.array(Expectation).default([]),
  ignore_columns: IgnoreColumns.optional().describe(
    "Per table, columns left out of this case's state differences, added to stategate.yml's.",
  ),
});

// ---------------------------------------------------------------- judge labels and calibration

export const JudgeLabel = z.strictObject({
  criterion: z.string().min(1).describe('The criterion, word for word as in the judge expectations.'),
  message: z.string().describe("The user's message the reply answered."),
  reply: z.string().describe('The agent reply that was labelled.'),
  label: z.enum(['pass', 'fail']).describe("The human's label."),
  threshold: z
    .number()
    .min(0)
    .max(1)
    .default(JUDGE_THRESHOLD_DEFAULT)
    .describe('The score the judge needs for a pass, as in the judge expectations.'),
});

export const LabelsFile = z.strictObject({ labels: z.array(JudgeLabel).min(1) });

const Count = z.number().int().min(0);

/** Judge verdicts against human labels: rows are the judge's verdict, columns the human's label. */
export const AgreementTable = z.strictObject({
  both_pass: Count,
  judge_pass_human_fail: Count,
  judge_fail_human_pass: Count,
  both_fail: Count,
});

// Not strict: the file is written by a tool and may gain fields; a reader ignores what it does not know.
export const CriterionCalibration = z.object({
  criterion: z.string().min(1),
  model: z.string().min(1),
  labels: Count,
  judge_errors: Count,
  n: Count,
  agreement: z.number().min(0).max(1).nullable(),
  kappa: z.number().nullable(),
  table: AgreementTable,
  calibrated: z.boolean(),
  why_not: z.array(z.string()).default([]),
});

export const JudgeCalibrationFile = z.object({
  version: z.literal(1),
  criteria: z.array(CriterionCalibration),
});

// ---------------------------------------------------------------- inferred types

export type StategateConfig = z.infer<typeof StategateConfig>;
export type IgnoreColumns = z.infer<typeof IgnoreColumns>;
export type AgentConfig = z.infer<typeof AgentConfig>;
export type DatabaseConfig = z.infer<typeof DatabaseConfig>;
export type ModelProvider = z.infer<typeof ModelProvider>;
export type BudgetConfig = z.infer<typeof BudgetConfig>;
export type UserSimulatorConfig = z.infer<typeof UserSimulatorConfig>;
export type TwinFile = z.infer<typeof TwinFile>;
export type TwinTool = z.infer<typeof TwinTool>;
export type ErrorReply = z.infer<typeof ErrorReply>;
export type RaisedError = z.infer<typeof RaisedError>;
export type FaultRule = z.infer<typeof FaultRule>;
export type UserSpec = z.infer<typeof UserSpec>;
export type UserFact = z.infer<typeof UserFact>;
export type FaultName = z.infer<typeof FaultName>;
export type ModelFaultRule = z.infer<typeof ModelFaultRule>;
export type ModelFaultName = z.infer<typeof ModelFaultName>;

/** A scenario's fault rule that applies to a model provider's calls (it names `model:`, not `tool:`). */
export function isModelFault(rule: FaultRule | ModelFaultRule): rule is ModelFaultRule {
  return 'model' in rule;
}

/** The scenario's fault rules for tools, in order. */
export function toolFaults(faults: readonly (FaultRule | ModelFaultRule)[]): FaultRule[] {
  return faults.filter((f): f is FaultRule => !isModelFault(f));
}

/** The scenario's fault rules for model providers, in order. */
export function modelFaults(faults: readonly (FaultRule | ModelFaultRule)[]): ModelFaultRule[] {
  return faults.filter(isModelFault);
}
export type JudgeLabel = z.infer<typeof JudgeLabel>;
export type AgreementTable = z.infer<typeof AgreementTable>;
export type CriterionCalibration = z.infer<typeof CriterionCalibration>;
export type JudgeCalibrationFile = z.infer<typeof JudgeCalibrationFile>;

/** An expectation, discriminated by which kind key it carries. */
export type Expectation = ExpectationType;

export type Scenario = Omit<z.infer<typeof ScenarioFile>, 'expect'> & {
  expect: Expectation[];
  /** Where the scenario came from, relative to the suite root: used for annotations and errors. */
  file: string;
  /** 1-based lines of the scenario's `id` and of each expectation's `id`: the case carries them to annotations. */
  lines?: ScenarioLines;
};

/** A twin tool with its name and the file it came from. */
export type Tool = TwinTool & { name: string; file: string };
