// Small builders of scenarios, calls and graded episodes, so each test states only what it is about.
import { EXPECTATION_KINDS, type Expectation, type Scenario } from '../../src/config/schema.js';
import type {
  AgentRun,
  CallRecord,
  Conversation,
  ExpectationResult,
  FailureLabel,
  GradedEpisode,
  InfraError,
  ResultGrade,
  Side,
  StateDiff,
  TableDiff,
} from '../../src/model/episode.js';

/** A scenario with the given expectations (query expectations on orders unless given in full). */
export function scenario(
  id: string,
  expect: (Partial<Expectation> & { id: string })[] = [],
  description = '',
): Scenario {
  return {
    id,
    description,
    tags: [],
    state: { rows: {} },
    input: { message: 'Refund ORD-1001 please', context: {} },
    faults: [],
    expect: expect.map((e) => {
      const hasKind = Object.keys(e).some((k) => (EXPECTATION_KINDS as string[]).includes(k));
      const kind = hasKind
        ? {}
        : { query: "SELECT refund_count FROM orders WHERE id = 'ORD-1001'", equals: 1 };
      return { critical: false, ...kind, ...e } as Expectation;
    }),
    file: `scenarios/${id}.yaml`,
  };
}

let seq = 0;

/** One recorded call; a write defaults to applied. */
export function call(
  tool: string,
  args: Record<string, unknown> = {},
  o: Partial<Pick<CallRecord, 'status' | 'mutated' | 'replay' | 'fault' | 'result' | 'risk'>> = {},
): CallRecord {
  seq += 1;
  return {
    seq,
    tool,
    args,
    status: o.status ?? 200,
    result: o.result,
    fault: o.fault,
    mutated: o.mutated ?? false,
    replay: o.replay ?? false,
    risk: o.risk ?? (o.mutated ? 'write' : 'read'),
    startedAt: '2025-01-01T00:00:00.000Z',
    durationMs: 5,
    changes: [],
    via: 'http',
  };
}

export const emptyDiff = (): StateDiff => ({ tables: {}, fingerprints: {} });

/** A table diff from row changes given as [key, before, after] (before undefined: insert; after undefined: delete). */
export function tableDiff(
  table: string,
  primaryKey: string[] | null,
  rows: [
    Record<string, unknown> | null,
    Record<string, unknown> | undefined,
    Record<string, unknown> | undefined,
  ][],
): TableDiff {
  const t: TableDiff = { table, primaryKey, inserted: [], updated: [], deleted: [] };
  for (const [key, before, after] of rows) {
    const op = before === undefined ? 'insert' : after === undefined ? 'delete' : 'update';
    const change = { table, op, key, before, after } as const;
    (op === 'insert' ? t.inserted : op === 'delete' ? t.deleted : t.updated).push({ ...change });
  }
  return t;
}

export function stateDiff(...tables: TableDiff[]): StateDiff {
  return { tables: Object.fromEntries(tables.map((t) => [t.table, t])), fingerprints: {} };
}

export interface EpisodeSpec {
  /** Verdicts by expectation id; unlisted expectations pass. */
  verdicts?: Record<string, ResultGrade>;
  labels?: Record<string, FailureLabel>;
  messages?: Record<string, string>;
  calls?: CallRecord[];
  diff?: StateDiff;
  infraError?: InfraError;
  durationMs?: number;
  usage?: { input_tokens?: number; output_tokens?: number; cost_usd?: number };
  /** How the agent ended, over the default (exit 0 with a result). */
  agent?: Partial<AgentRun>;
  /** The record's conversation, for a scenario with `user:`. */
  conversation?: Conversation;
}

/** One graded episode of `s` on `side`, repeat `repeat`, results in scenario order with `completed` first. */
export function episode(s: Scenario, side: Side, repeat: number, spec: EpisodeSpec = {}): GradedEpisode {
  const ids = [
    { id: 'completed', critical: true, kind: 'completed' },
    ...s.expect.map((e) => ({
      id: e.id,
      critical: e.critical ?? false,
      kind: (EXPECTATION_KINDS as string[]).find((k) => k in e) ?? 'query',
    })),
  ];
  const results: ExpectationResult[] = ids.map(({ id, critical, kind }) => {
    const verdict = spec.verdicts?.[id] ?? 'pass';
    const r: ExpectationResult = {
      id,
      kind,
      critical,
      verdict,
      message: spec.messages?.[id] ?? `${id}: ${verdict}`,
    };
    if (verdict !== 'pass')
      r.label = spec.labels?.[id] ?? (verdict === 'error' ? 'EVALUATION_ERROR' : 'STATE_MISMATCH');
    return r;
  });
  return {
    record: {
      episode: `${s.id}-${side}-${repeat}`,
      scenario: s.id,
      side,
      repeat,
      seed: 42 + repeat,
      calls: spec.calls ?? [],
      refused: [],
      agent: {
        exitCode: 0,
        signal: null,
        timedOut: false,
        durationMs: spec.durationMs ?? 1000,
        stdout: '',
        stderr: '',
        truncated: false,
        result: { reply: 'Done.', outcome: 'SUCCESS', usage: spec.usage },
        ...spec.agent,
      },
      diff: spec.diff ?? emptyDiff(),
      queries: {},
      infraError: spec.infraError,
      timings: {},
      ...(spec.conversation ? { conversation: spec.conversation } : {}),
    },
    results,
    passed: results.every((r) => r.verdict === 'pass') && !spec.infraError,
  };
}

/** N repeats of one side: each entry is the spec of one repeat (`{}`: everything passes). */
export function repeats(s: Scenario, side: Side, specs: EpisodeSpec[]): GradedEpisode[] {
  return specs.map((spec, i) => episode(s, side, i + 1, spec));
}

/** N repeats that all pass. */
export function passing(s: Scenario, side: Side, n: number): GradedEpisode[] {
  return repeats(
    s,
    side,
    Array.from({ length: n }, () => ({})),
  );
}
