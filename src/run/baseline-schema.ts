// The file format of one baseline cache entry, as zod reads it back. An entry is input like any
// other (a file on disk, restored from a cache service): anything that does not parse is a miss.
import { z } from 'zod';
import { FAILURE_LABELS } from '../model/episode.js';

const side = z.enum(['base', 'head']);
const row = z.record(z.string(), z.unknown());

const RowChangeSchema = z.strictObject({
  table: z.string(),
  op: z.enum(['insert', 'update', 'delete']),
  key: row.nullable(),
  before: row.optional(),
  after: row.optional(),
});

const CallRecordSchema = z.strictObject({
  seq: z.number().int(),
  tool: z.string(),
  args: z.unknown(),
  status: z.number().int(),
  result: z.unknown().optional(),
  error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
  fault: z.string().optional(),
  mutated: z.boolean(),
  replay: z.boolean(),
  effectKey: z.string().optional(),
  risk: z.enum(['read', 'write', 'write_irreversible']),
  startedAt: z.string(),
  durationMs: z.number(),
  changes: z.array(RowChangeSchema),
  via: z.enum(['http', 'mcp']),
  cutOff: z.literal(true).optional(),
  harnessError: z.string().optional(),
  turn: z.number().int().min(1).optional(),
});

const ConversationSchema = z.strictObject({
  turns: z.array(
    z.strictObject({
      role: z.enum(['user', 'agent']),
      turn: z.number().int().min(1),
      text: z.string(),
      at: z.string(),
      facts: z.array(z.string()).optional(),
    }),
  ),
  maxTurns: z.number().int().min(1),
  end: z.enum(['user', 'agent', 'max_turns', 'agent_left', 'timeout', 'simulator_error']),
  learned: z.record(z.string(), z.number().int().min(1)),
  error: z.string().optional(),
  simulator: z
    .strictObject({
      provider: z.string(),
      model: z.string(),
      calls: z.number().int().min(0),
      inputTokens: z.number().min(0),
      outputTokens: z.number().min(0),
      cachedInputTokens: z.number().min(0),
      costUsd: z.number().min(0).optional(),
      cached: z.number().int().min(0),
    })
    .optional(),
});

const AgentRunSchema = z.strictObject({
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  durationMs: z.number(),
  stdout: z.string(),
  stderr: z.string(),
  truncated: z.boolean(),
  result: z
    .strictObject({
      reply: z.string(),
      outcome: z.enum(['SUCCESS', 'FAILURE', 'PARTIAL', 'ESCALATED']).optional(),
      tool_calls: z.array(z.unknown()).optional(),
      usage: z
        .strictObject({
          input_tokens: z.number().min(0).optional(),
          output_tokens: z.number().min(0).optional(),
          cost_usd: z.number().min(0).optional(),
        })
        .optional(),
    })
    .optional(),
  resultError: z.string().optional(),
});

const ModelCallRecordSchema = z.strictObject({
  seq: z.number().int().min(1),
  provider: z.string(),
  path: z.string(),
  model: z.string().nullable(),
  stream: z.boolean(),
  status: z.number().int(),
  startedAt: z.string(),
  latencyMs: z.number().min(0),
  firstByteMs: z.number().min(0).optional(),
  usage: z
    .strictObject({
      input_tokens: z.number().min(0),
      cached_input_tokens: z.number().min(0),
      output_tokens: z.number().min(0),
    })
    .nullable(),
  costUsd: z.number().min(0).nullable(),
  fault: z.string().optional(),
  error: z.string().optional(),
  unreachable: z.literal(true).optional(),
});

const EpisodeRecordSchema = z.strictObject({
  episode: z.string(),
  scenario: z.string(),
  side,
  repeat: z.number().int().min(1),
  seed: z.number().int().min(0),
  calls: z.array(CallRecordSchema),
  refused: z.array(
    z.strictObject({ at: z.string(), path: z.string(), status: z.number().int(), reason: z.string() }),
  ),
  agent: AgentRunSchema,
  diff: z.strictObject({
    tables: z.record(
      z.string(),
      z.strictObject({
        table: z.string(),
        primaryKey: z.array(z.string()).nullable(),
        // The column types row values compare by: an entry without them would grade by form.
        columnTypes: z.record(z.string(), z.string()).optional(),
        inserted: z.array(RowChangeSchema),
        updated: z.array(RowChangeSchema),
        deleted: z.array(RowChangeSchema),
      }),
    ),
    fingerprints: z.record(z.string(), z.string()),
  }),
  queries: z.record(
    z.string(),
    z.strictObject({
      sql: z.string(),
      rows: z.array(row).optional(),
      // The column types strict comparison follows: an entry without them would grade loosely.
      fields: z.array(z.strictObject({ name: z.string(), type: z.string() })).optional(),
      error: z.string().optional(),
    }),
  ),
  infraError: z
    .strictObject({
      stage: z.enum([
        'sandbox',
        'gateway',
        'tool',
        'agent-start',
        'capture',
        'judge',
        'interrupted',
        'budget',
        'user-simulator',
      ]),
      message: z.string(),
      provoked: z.literal(true).optional(),
      timedOut: z.literal(true).optional(),
    })
    .optional(),
  timings: z.record(z.string(), z.number()),
  pin: z.strictObject({ suite: z.string(), scenario: z.string() }).optional(),
  modelCalls: z.array(ModelCallRecordSchema).optional(),
  conversation: ConversationSchema.optional(),
});

const ExpectationResultSchema = z.strictObject({
  id: z.string(),
  kind: z.string(),
  critical: z.boolean(),
  verdict: z.enum(['pass', 'fail', 'error']),
  label: z.enum(FAILURE_LABELS).optional(),
  message: z.string(),
  expected: z.unknown().optional(),
  actual: z.unknown().optional(),
});

export const GradedEpisodeSchema = z.strictObject({
  record: EpisodeRecordSchema,
  results: z.array(ExpectationResultSchema),
  passed: z.boolean(),
});

/** The format marker and version of an entry file; another version is a miss, never read. */
export const BASELINE_FORMAT = 'stategate-baseline-cache';
export const BASELINE_FORMAT_VERSION = 1;

export const BaselineEntrySchema = z.strictObject({
  format: z.literal(BASELINE_FORMAT),
  version: z.literal(BASELINE_FORMAT_VERSION),
  key: z.string().regex(/^[0-9a-f]{64}$/, 'expected a sha256 hex key'),
  /** What the key was made of, for a reader of the file. */
  parts: z.record(z.string(), z.unknown()),
  /** When the run that stored the entry started (ISO 8601). */
  stored_at: z.iso.datetime(),
  /** Scenario id -> the base episodes of that case, graded. */
  episodes: z.record(z.string(), z.array(GradedEpisodeSchema)),
});

export type BaselineEntry = z.infer<typeof BaselineEntrySchema>;
