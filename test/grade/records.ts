// Small builders for the records grading reads: scenarios parsed by the real schema, episode
// records, calls, row changes and twin tools written by hand.
import { parse as parseYaml } from 'yaml';
import {
  type Expectation,
  type Scenario,
  ScenarioFile,
  type Tool,
  TwinTool,
} from '../../src/config/schema.js';
import type {
  AgentRun,
  CallRecord,
  EpisodeRecord,
  QueryResult,
  Row,
  RowChange,
  StateDiff,
  TableDiff,
} from '../../src/model/episode.js';

/** A scenario with these expectations, validated by the scenario schema (so defaults apply). */
export function scenario(expect: unknown[], extra: Record<string, unknown> = {}): Scenario {
  return fromFile({
    id: 'refund-case',
    input: { message: 'Refund $40 on ORD-1001, please.' },
    expect,
    ...extra,
  });
}

/** A scenario from YAML text, as a user writes it. */
export function scenarioYaml(text: string): Scenario {
  return fromFile(parseYaml(text));
}

function fromFile(raw: unknown): Scenario {
  const parsed = ScenarioFile.parse(raw);
  return { ...parsed, expect: parsed.expect as Expectation[], file: `scenarios/${parsed.id}.yaml` };
}

/** The only expectation of a one-expectation scenario, as the schema parsed it. */
export function expectation<T = Expectation>(raw: Record<string, unknown>): T {
  return scenario([{ id: 'e1', ...raw }]).expect[0] as T;
}

/** An agent that exited 0 and printed this result. */
export function agentRun(overrides: Partial<AgentRun> = {}): AgentRun {
  return {
    exitCode: 0,
    signal: null,
    timedOut: false,
    durationMs: 1200,
    stdout: '',
    stderr: '',
    truncated: false,
    result: { reply: 'I refunded $40 to your card.', outcome: 'SUCCESS' },
    ...overrides,
  };
}

type CallSpec = Partial<CallRecord> & { tool: string };

/** Calls numbered 1..n in the order given; a write tool's 2xx call mutated unless told otherwise. */
export function calls(...specs: CallSpec[]): CallRecord[] {
  return specs.map((spec, i) => {
    const risk = spec.risk ?? (/^(refund|send|cancel|update|escalate)/.test(spec.tool) ? 'write' : 'read');
    const status = spec.status ?? 200;
    return {
      seq: i + 1,
      args: {},
      status,
      mutated: risk !== 'read' && status >= 200 && status < 300,
      replay: false,
      risk,
      startedAt: new Date(Date.UTC(2024, 4, 1, 10, 0, i)).toISOString(),
      durationMs: 5,
      changes: [],
      via: 'http',
      ...spec,
    } as CallRecord;
  });
}

/** A row change of a table with an `id` primary key (or none, for a multiset table). */
export function inserted(table: string, after: Row, keyed = true): RowChange {
  return { table, op: 'insert', key: keyed ? { id: after.id } : null, after };
}

export function updated(table: string, before: Row, after: Row): RowChange {
  return { table, op: 'update', key: { id: after.id }, before, after };
}

export function deleted(table: string, before: Row, keyed = true): RowChange {
  return { table, op: 'delete', key: keyed ? { id: before.id } : null, before };
}

/** A diff holding these changes, grouped per table and operation. */
export function diffOf(...changes: RowChange[]): StateDiff {
  const tables: Record<string, TableDiff> = {};
  for (const c of changes) {
    tables[c.table] ??= {
      table: c.table,
      primaryKey: c.key ? Object.keys(c.key) : null,
      inserted: [],
      updated: [],
      deleted: [],
    };
    const t = tables[c.table];
    (c.op === 'insert' ? t.inserted : c.op === 'update' ? t.updated : t.deleted).push(c);
  }
  return { tables, fingerprints: {} };
}

/** A query's recorded rows. */
export function rows(sql: string, result: Row[]): QueryResult {
  return { sql, rows: result };
}

/** An episode record; by default the agent succeeded and nothing was called or changed. */
export function record(overrides: Partial<EpisodeRecord> = {}): EpisodeRecord {
  return {
    episode: 'refund-case/head/1',
    scenario: 'refund-case',
    side: 'head',
    repeat: 1,
    seed: 42,
    calls: [],
    refused: [],
    agent: agentRun(),
    diff: { tables: {}, fingerprints: {} },
    queries: {},
    timings: {},
    ...overrides,
  };
}

/** Twin tools with these risks, as the suite loader would hand them over. */
export function twinTools(risks: Record<string, 'read' | 'write' | 'write_irreversible'>): Map<string, Tool> {
  const out = new Map<string, Tool>();
  for (const [name, risk] of Object.entries(risks)) {
    out.set(name, { ...TwinTool.parse({ risk, static: {} }), name, file: 'twins/shop.yaml' } as Tool);
  }
  return out;
}
