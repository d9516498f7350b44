// The schema of report.json as `merge` accepts it: every field the report type has, bounded. A report
// is input like any other (a fork's run may have written it), so unknown fields, oversized strings and
// lists, ids outside the scenario-id form and paths leaving the workspace are refused, never trusted.
import { z } from 'zod';
import { CaseClassName, GateClass } from '../config/schema.js';
import { FAILURE_SIGNATURES } from '../grade/signature.js';
import { ENGINE_NAMES } from '../model/engine.js';
import { FAILURE_LABELS } from '../model/episode.js';
import type { CaseReport, Report, SideSummary } from '../model/report.js';

/** The limits of one report.json: generous for real runs, small enough that no file can exhaust the job. */
export const REPORT_LIMITS = {
  /** Bytes of one report.json file. */
  bytes: 64 * 1024 * 1024,
  cases: 10_000,
  /** Expectations per case and side, and changed expectations per case. */
  expectations: 500,
  /** Repeats per side (and any count of repeats). */
  runs: 100_000,
  /** Characters of a sentence, reason, message or description. */
  text: 20_000,
  /** Characters of an id, a ref, a table or column name. */
  id: 200,
  /** Characters of a file path. */
  path: 1_000,
  /** State differences per case. */
  stateDiff: 1_000,
  /** Characters of a string inside a state value, and nesting depth of a state value. */
  valueString: 100_000,
  valueDepth: 32,
  /** Values of k for pass@k and pass^k. */
  ks: 64,
  /** Calls per side in a case's step-by-step table (and conversation turns beside them). */
  steps: 1_000,
  /** Characters of one conversation turn in a step table. */
  turnText: 2_000,
  /** Characters of an agent's stderr tail. */
  stderr: 20_000,
  /** A line number in a scenario file (a file of 10 million lines is not one anyone reviews). */
  line: 10_000_000,
} as const;

/** Scenario ids, as stategate.yml's scenario files allow them. */
export const CASE_ID = /^[a-z0-9][a-z0-9-]*$/;
/** Expectation ids, as scenario files allow them (`completed` is one of them). */
export const EXPECTATION_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

const L = REPORT_LIMITS;
const caseId = z
  .string()
  .max(L.id)
  .regex(
    CASE_ID,
    'expected a scenario id (lowercase letters, digits and dashes, starting with a letter or digit)',
  );
const expectationId = z
  .string()
  .max(L.id)
  .regex(
    EXPECTATION_ID,
    'expected an expectation id (letters, digits, _ . -, starting with a letter or digit)',
  );
const text = z.string().max(L.text);
// Names and refs are single-line by nature: no control characters, no line separators.
const NO_CONTROL = /^[^\u0000-\u001f\u007f-\u009f\u2028\u2029]*$/;
const name = z.string().max(L.id).regex(NO_CONTROL, 'expected a name without control characters');
const hex = z.string().regex(/^[0-9a-f]{1,128}$/, 'expected a lowercase hex digest');
const count = z.number().int().min(0).max(L.runs);
const amount = z.number().min(0).max(Number.MAX_SAFE_INTEGER);
const rate = z.number().min(0).max(1);

/** Control characters have no place in a path (they would break annotations and log lines). */
function pathProblem(path: string): string | null {
  if (path === '') return 'expected a file path, got an empty string';
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'expected a file path without control characters';
  if (path.includes('\\')) return "expected a path with '/' separators, got a backslash";
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'expected a relative path, got an absolute one';
  if (path.split('/').includes('..')) return "expected a path inside the workspace, got a '..' segment";
  return null;
}

/** A file path relative to the workspace that stays inside it. */
const relativePath = z
  .string()
  .max(L.path)
  .superRefine((value, ctx) => {
    const problem = pathProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** Why a state value is out of bounds (too deep, a string too long), or null. */
function valueProblem(value: unknown, depth: number): string | null {
  if (depth > L.valueDepth) return `expected a value nested at most ${L.valueDepth} deep`;
  if (typeof value === 'string')
    return value.length > L.valueString ? `expected a string of at most ${L.valueString} characters` : null;
  if (value === null || typeof value !== 'object') return null;
  const items = Array.isArray(value) ? value : Object.values(value);
  for (const item of items) {
    const problem = valueProblem(item, depth + 1);
    if (problem) return problem;
  }
  return null;
}

/** A database value as JSON: any shape, bounded in depth and string length. */
const stateValue = z.unknown().superRefine((value, ctx) => {
  const problem = valueProblem(value, 0);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const kKey = z.string().regex(/^[1-9][0-9]{0,5}$/, 'expected a k (a positive whole number)');
const kTable = z
  .record(kKey, rate.nullable())
  .refine((t) => Object.keys(t).length <= L.ks, `expected at most ${L.ks} values of k`);

const ExpectationCountsSchema = z.strictObject({
  pass: count,
  fail: count,
  error: count,
  critical: z.boolean(),
  labels: z.partialRecord(z.enum(FAILURE_LABELS), count).optional(),
  example: text.optional(),
  uncalibrated: z.literal(true).optional(),
  agentErrors: count.optional(),
});

const SideStatsSchema = z.strictObject({
  n: count,
  c: count,
  pass_rate: rate.nullable(),
  all_n: z.boolean(),
  pass_at_k: kTable,
  pass_hat_k: kTable,
  wilson: z.strictObject({ low: rate, high: rate }).nullable(),
});

const SideCostSchema = z.strictObject({
  total_usd: amount,
  successful_episodes: count,
  per_successful_episode: amount.nullable(),
  per_dependable_case: amount.nullable(),
});

const SideSummarySchema = z.strictObject({
  runs: count,
  passes: count,
  expectations: z
    .record(expectationId, ExpectationCountsSchema)
    .refine(
      (e) => Object.keys(e).length <= L.expectations,
      `expected at most ${L.expectations} expectations`,
    ),
  metrics: z
    .strictObject({
      toolCalls: amount,
      latencyMs: amount,
      costUsd: amount,
      inputTokens: amount,
      outputTokens: amount,
      costUnreported: z.literal(true).optional(),
      tokensUnreported: z.literal(true).optional(),
      claimed: z.literal(true).optional(),
      modelCalls: count.optional(),
      simulatorCostUsd: amount.optional(),
      judgeCostUsd: amount.optional(),
    })
    .optional(),
  infraErrors: count.optional(),
  provokedErrors: count.optional(),
  episodes: z.array(name).max(L.runs).optional(),
  stats: SideStatsSchema.optional(),
  signatures: z.partialRecord(z.enum(FAILURE_SIGNATURES), count).optional(),
  cost: SideCostSchema.optional(),
  faults_fired: z
    .array(
      z.strictObject({
        rule: z.number().int().min(1).max(L.expectations),
        tool: name.optional(),
        model: name.optional(),
        fault: name,
        repeats: count,
      }),
    )
    .max(L.expectations)
    .optional(),
});

const sideCounts = z.strictObject({ pass: count, fail: count, error: count });

const ChangedExpectationSchema = z.strictObject({
  id: expectationId,
  critical: z.boolean(),
  change: z.enum(['broke', 'fixed', 'error', 'pre-existing']),
  label: z.enum(FAILURE_LABELS).optional(),
  base: sideCounts,
  head: sideCounts,
  message: text.optional(),
  test: z
    .strictObject({
      decision: z.enum(['worse', 'not-worse', 'undecided', 'continue']),
      p: rate.nullable(),
    })
    .optional(),
  uncalibrated: z.literal(true).optional(),
});

const EpisodeStepsSchema = z.strictObject({
  episode: name,
  repeat: count,
  outcome: z.enum(['passed', 'failed', 'not graded']),
  steps: z
    .array(
      z.strictObject({
        tool: name,
        args: stateValue,
        status: z.number().int().min(0).max(999),
        effect: z.enum(['applied', 'replayed', 'none']),
        fault: name.optional(),
        rows: count.optional(),
        turn: count.optional(),
        code: text.optional(),
      }),
    )
    .max(L.steps),
  steps_cut: count.optional(),
  turns: z
    .array(
      z.strictObject({
        role: z.enum(['user', 'agent']),
        turn: count,
        text: z.string().max(L.turnText),
        facts: z.array(name).max(L.steps).optional(),
      }),
    )
    .max(L.steps)
    .optional(),
  conversation_end: z
    .enum(['user', 'agent', 'max_turns', 'agent_left', 'timeout', 'simulator_error'])
    .optional(),
  reply: text.optional(),
  claimed: z.enum(['SUCCESS', 'FAILURE', 'PARTIAL', 'ESCALATED']).optional(),
});

const AgentStderrSchema = z.strictObject({
  episode: name,
  repeat: count,
  ended: text,
  tail: z.string().max(L.stderr),
  cut: z.literal(true).optional(),
});

const line = z.number().int().min(1, 'expected a line number (1 or more)').max(L.line);

/** A case's lines: where its scenario and each expectation are written in its file. */
const ScenarioLinesSchema = z.strictObject({
  scenario: line,
  expectations: z
    .record(expectationId, line)
    .refine(
      (lines) => Object.keys(lines).length <= L.expectations,
      `expected at most ${L.expectations} expectation lines`,
    ),
});

const CaseReportSchema = z.strictObject({
  id: caseId,
  class: CaseClassName,
  flaky: z.strictObject({ base: z.boolean(), head: z.boolean() }),
  base: SideSummarySchema.nullable(),
  head: SideSummarySchema,
  divergence: z
    .strictObject({
      kind: z.enum([
        'different-tool',
        'different-arguments',
        'different-result',
        'stopped-early',
        'different-turn',
        'same',
      ]),
      step: count,
      sentence: text,
    })
    .nullable(),
  state_diff: z
    .array(z.strictObject({ table: name, key: text, column: name, base: stateValue, head: stateValue }))
    .max(L.stateDiff),
  file: relativePath.optional(),
  lines: ScenarioLinesSchema.optional(),
  description: text.optional(),
  reason: text.optional(),
  expectations_changed: z.array(ChangedExpectationSchema).max(L.expectations).optional(),
  flaky_explanation: z.strictObject({ base: text.optional(), head: text.optional() }).optional(),
  state_diff_cut: count.optional(),
  ignored_columns: z.array(text).max(L.stateDiff).optional(),
  repeats_decision: z.strictObject({ base: count, head: count, reason: text }).optional(),
  steps: z.strictObject({ base: EpisodeStepsSchema.nullable(), head: EpisodeStepsSchema }).optional(),
  agent_stderr: z
    .strictObject({ base: AgentStderrSchema.optional(), head: AgentStderrSchema.optional() })
    .optional(),
});

const sideRef = z
  .strictObject({
    ref: z.string().max(L.path).regex(NO_CONTROL, 'expected a ref or directory without control characters'),
    sha: hex.nullable(),
    dirty: z.literal(true).optional(),
  })
  .nullable();

const SuiteStatsSchema = z.strictObject({
  scenarios: count,
  excluded: count,
  pass_rate: rate.nullable(),
  all_n: rate.nullable(),
  pass_at_k: kTable,
  pass_hat_k: kTable,
});

const SuiteCostSchema = z.strictObject({
  cases: count,
  total_usd: amount,
  successful_episodes: count,
  dependable_cases: count,
  per_successful_episode: amount.nullable(),
  per_dependable_case: amount.nullable(),
});

const side = z.enum(['base', 'head']);

/** report.json, version 1, as `merge` reads it. */
export const ReportSchema = z.strictObject({
  version: z.literal(1),
  verdict: z.enum(['PASS', 'WARN', 'BLOCK']),
  // At most one reason per gate class and level, and a few facts about the run.
  gate_reasons: z
    .array(
      z.strictObject({
        verdict: z.enum(['WARN', 'BLOCK']),
        class: GateClass.nullable(),
        cases: z.array(caseId).max(L.cases),
        text,
      }),
    )
    .max(64)
    .optional(),
  engine: z.enum(ENGINE_NAMES),
  engine_reason: text.optional(),
  pin: z.strictObject({
    suite_hash: hex,
    template_hash: hex,
    scenarios: z
      .record(caseId, hex)
      .refine((s) => Object.keys(s).length <= L.cases, `expected at most ${L.cases} scenarios`),
  }),
  sides: z.strictObject({ base: sideRef, head: sideRef }),
  counts: z.record(CaseClassName, count),
  cases: z.array(CaseReportSchema).max(L.cases),
  repeats: z.number().int().min(1).max(L.runs).optional(),
  seeds: z
    .record(
      z
        .string()
        .max(L.id + 5)
        .regex(/^(base|head):[a-z0-9][a-z0-9-]*$/, 'expected SIDE:SCENARIO-ID (e.g. head:refund-twice)'),
      z.array(z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)).max(L.runs),
    )
    .refine((s) => Object.keys(s).length <= 2 * L.cases, `expected at most ${2 * L.cases} entries`)
    .optional(),
  shard: z
    .strictObject({
      index: z.number().int().min(1).max(L.cases),
      total: z.number().int().min(1).max(L.cases),
    })
    .refine((s) => s.index <= s.total, 'expected index <= total')
    .nullable()
    .optional(),
  interrupted: z.boolean().optional(),
  gate: z.strictObject({ block: z.array(GateClass).max(16), warn: z.array(GateClass).max(16) }).optional(),
  started_at: z.string().max(64).optional(),
  duration_ms: amount.optional(),
  episodes_file: relativePath.optional(),
  stats: z.partialRecord(side, SuiteStatsSchema).optional(),
  repeats_policy: z
    .strictObject({ min: count, max: count, alpha: z.number().gt(0).lt(1) })
    .refine((p) => p.min >= 1 && p.min <= p.max, 'expected 1 <= min <= max')
    .optional(),
  repeats_rates: z
    .strictObject({
      min: count,
      max: count,
      adaptive: z.boolean(),
      default: z.boolean(),
      false_block: z
        .array(z.strictObject({ fails: rate, rate }))
        .max(16)
        .optional(),
      detection: z
        .array(z.strictObject({ base: rate, head: rate, rate }))
        .max(16)
        .optional(),
      meets_targets: z.boolean().optional(),
    })
    .refine((p) => p.min >= 1 && p.min <= p.max, 'expected 1 <= min <= max')
    .optional(),
  repeats_warning: z
    .strictObject({
      scenario: caseId,
      side,
      expectation: expectationId,
      fails: count,
      runs: count,
      false_block: rate,
    })
    .refine((w) => w.fails <= w.runs, 'expected fails <= runs')
    .optional(),
  signatures: z.partialRecord(side, z.partialRecord(z.enum(FAILURE_SIGNATURES), count)).optional(),
  cost: z.partialRecord(side, SuiteCostSchema).optional(),
  missing_shards: z.array(z.number().int().min(1).max(L.cases)).max(L.cases).optional(),
  judge_calibration: z
    .strictObject({
      model: name,
      file: relativePath.nullable(),
      sha256: hex.nullable(),
      calibrated: z.array(name).max(L.expectations),
    })
    .optional(),
  unverified: z.strictObject({ reason: text }).optional(),
  identical_sides: z.literal(true).optional(),
  filter: z
    .strictObject({
      scenarios: z.array(name).max(L.cases),
      tags: z.array(name).max(L.cases),
      selected: z.number().int().min(0).max(L.cases),
      total: z.number().int().min(0).max(L.cases),
    })
    .refine((f) => f.selected <= f.total, 'expected selected <= total')
    .optional(),
  checkout_warnings: z.array(z.strictObject({ side, text })).max(8).optional(),
  agent_isolation: z
    .strictObject({
      mode: z.enum(['namespaces', 'process-groups']),
      note: text,
      ran: z.enum(['sandbox', 'namespaces', 'container', 'none']).optional(),
      network: z.enum(['own', 'host']).optional(),
      uid: z.enum(['own', 'harness']).optional(),
    })
    .optional(),
  model_spend: z
    .strictObject({
      agent_usd: amount,
      run_usd: amount.optional(),
      episode_usd: amount.optional(),
      episodes_cut: count,
      calls_refused: count,
    })
    .optional(),
  policy_from: z.strictObject({ side: z.enum(['base', 'head', 'default']), reason: text }).optional(),
  baseline_cache: z
    .strictObject({
      key: hex,
      hit: z.boolean(),
      reused_episodes: count,
      stored_at: z.iso.datetime().nullable(),
      saved: z.boolean(),
      note: text.optional(),
    })
    .refine((c) => c.hit === c.reused_episodes > 0, 'expected hit exactly when reused_episodes > 0')
    .optional(),
  suite_changes: z
    .array(
      z.strictObject({
        kind: z.enum([
          'scenario-added',
          'scenario-removed',
          'scenario-edited',
          'twin-added',
          'twin-removed',
          'twin-changed',
          'schema-changed',
          'fixtures-changed',
          'gate-changed',
          'repeats-changed',
          'judge-changed',
          'models-changed',
          'database-changed',
          'ignore-columns-changed',
        ]),
        subject: z.string().max(L.path).regex(NO_CONTROL, 'expected a name without control characters'),
        weakens: z.boolean(),
        text,
      }),
    )
    .max(L.cases * 4)
    .optional(),
});

// The schema and the report type must describe the same thing: a report field the schema does not
// list, or a parsed report that is not a Report, fails type-checking here.
type Parsed = z.infer<typeof ReportSchema>;
type Missing<T, S> = Exclude<keyof T, keyof S>;
const _reportFields: [Missing<Report, Parsed>] extends [never] ? true : Missing<Report, Parsed> = true;
const _caseFields: [Missing<CaseReport, Parsed['cases'][number]>] extends [never] ? true : never = true;
const _sideFields: [Missing<SideSummary, NonNullable<Parsed['cases'][number]['base']>>] extends [never]
  ? true
  : never = true;
const _assignable = (r: Parsed): Report => r;
void [_reportFields, _caseFields, _sideFields, _assignable];

/** `cases[3].head.expectations["no-refund"].pass`, from a zod issue path. */
export function jsonPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out || '(the top level)';
}
