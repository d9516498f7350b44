// The suite diff on hand-made suites: every way a head can loosen the base's suite is found and
// marked as weakening; additions and tightenings are reported without weakening.
import { describe, expect, it } from 'vitest';
import {
  diffSuites,
  repeatsWithFloor,
  type SuiteShape,
  weakenings,
} from '../../src/compare/suite-changes.js';
import {
  type Scenario,
  ScenarioFile,
  StategateConfig,
  type Tool,
  TwinTool,
} from '../../src/config/schema.js';

type Raw = Record<string, unknown>;

function scenario(id: string, expect: Raw[], extra: Raw = {}): Scenario {
  const parsed = ScenarioFile.parse({ id, input: { message: 'refund ORD-1' }, expect: [], ...extra });
  // Expectations go through the same schema the loader picks by kind, defaults filled in.
  const withDefaults = ScenarioFile.parse({ ...parsed, expect }).expect;
  return { ...parsed, expect: withDefaults, file: `scenarios/${id}.yaml` } as Scenario;
}

function tool(name: string, def: Raw): Tool {
  return { ...TwinTool.parse(def), name, file: 'twins/tools.yaml' } as Tool;
}

function suite(parts: {
  scenarios?: Scenario[];
  tools?: Tool[];
  config?: Raw;
  files?: Record<string, string>;
}): SuiteShape {
  const files = parts.files ?? { 'db/schema.sql': 'CREATE TABLE orders (id text primary key);' };
  return {
    config: StategateConfig.parse({ version: 1, agent: { command: 'node agent.mjs' }, ...parts.config }),
    scenarios: parts.scenarios ?? [],
    tools: new Map((parts.tools ?? []).map((t) => [t.name, t])),
    template: {
      schema: Object.keys(files)
        .filter((f) => f.endsWith('.sql'))
        .map((f) => ({ file: f, sql: files[f] })),
      fixtures: [],
    },
    files,
  };
}

const refundOnce = {
  id: 'refunded-once',
  critical: true,
  query: 'SELECT refund_count FROM orders',
  equals: 1,
};
const noDouble = { id: 'no-double-refund', critical: true, no_duplicate_effect: 'refund_payment' };
const fault = { tool: 'refund_payment', when: { call: 1 }, fault: 'timeout_after_mutation' };
const base = suite({
  scenarios: [
    scenario('refund-twice', [refundOnce, noDouble], { faults: [fault] }),
    scenario('happy', [refundOnce]),
  ],
  tools: [
    tool('refund_payment', { risk: 'write', sql: 'UPDATE orders SET refund_count = refund_count + 1' }),
  ],
});

function edited(expectations: Raw[], extra: Raw = {}): SuiteShape {
  return {
    ...base,
    scenarios: [scenario('refund-twice', expectations, { faults: [fault], ...extra }), base.scenarios[1]],
  };
}

const texts = (s: SuiteShape, from: SuiteShape = base) =>
  diffSuites(from, s).map((c) => `${c.weakens ? 'weakens' : 'ok'}: ${c.text}`);

describe('diffSuites', () => {
  it('finds nothing between a suite and itself', () => {
    expect(diffSuites(base, base)).toEqual([]);
  });

  it('a removed scenario weakens; an added one does not', () => {
    const head = { ...base, scenarios: [base.scenarios[1], scenario('new-one', [refundOnce])] };
    expect(diffSuites(base, head)).toEqual([
      { kind: 'scenario-added', subject: 'new-one', weakens: false, text: 'scenario new-one added' },
      {
        kind: 'scenario-removed',
        subject: 'refund-twice',
        weakens: true,
        text: 'scenario refund-twice removed',
      },
    ]);
  });

  it('a removed expectation, a dropped critical and a removed fault weaken', () => {
    const head = {
      ...base,
      scenarios: [scenario('refund-twice', [{ ...refundOnce, critical: false }]), base.scenarios[1]],
    };
    expect(texts(head)).toEqual([
      'weakens: scenario refund-twice: expectation no-double-refund removed',
      'weakens: scenario refund-twice: expectation refunded-once loosened: no longer critical',
      'weakens: scenario refund-twice: fault timeout_after_mutation on refund_payment removed or changed',
    ]);
  });

  it('comparators: a dropped or swapped comparator, a lowered gt, a widened in, a changed regex or query weaken', () => {
    const loose = (e: Raw) => texts(edited([{ ...e }, noDouble]));
    const { equals: _e, ...bare } = refundOnce;
    expect(loose({ ...bare, not_equals: 0 })).toEqual([
      'weakens: scenario refund-twice: expectation refunded-once loosened: equals dropped',
      'ok: scenario refund-twice: expectation refunded-once tightened: not_equals added',
    ]);
    expect(loose({ ...bare, equals: 2 })[0]).toBe(
      'weakens: scenario refund-twice: expectation refunded-once loosened: equals changed from 1 to 2',
    );
    expect(loose({ ...bare, empty: false })[0]).toMatch(/equals dropped/);
    expect(loose({ ...refundOnce, query: 'SELECT 1' })[0]).toMatch(/loosened: query changed/);
    // Comparing by form lets values pass that only look like the expected ones.
    expect(loose({ ...refundOnce, loose: true })).toEqual([
      'weakens: scenario refund-twice: expectation refunded-once loosened: loose added',
    ]);
    const gt = { id: 'refunded-once', critical: true, query: 'SELECT 1', gt: 3 };
    const gtBase = edited([gt, noDouble]);
    const gtDiff = (h: Raw) =>
      diffSuites(gtBase, edited([h, noDouble])).map((c) => `${c.weakens ? 'weakens' : 'ok'}: ${c.text}`);
    expect(gtDiff({ ...gt, gt: 1 })).toEqual([
      'weakens: scenario refund-twice: expectation refunded-once loosened: gt lowered from 3 to 1',
    ]);
    expect(gtDiff({ ...gt, gt: 5 })).toEqual([
      'ok: scenario refund-twice: expectation refunded-once tightened: gt raised from 3 to 5',
    ]);
    const inBase = edited([{ id: 'refunded-once', query: 'SELECT 1', in: [1, 2] }, noDouble]);
    const inHead = edited([{ id: 'refunded-once', query: 'SELECT 1', in: [1, 2, 3] }, noDouble]);
    expect(weakenings(diffSuites(inBase, inHead)).map((c) => c.text)).toEqual([
      'scenario refund-twice: expectation refunded-once loosened: in widened to allow 3',
    ]);
    const reBase = edited([{ id: 'r', reply_matches: '^Refunded \\$40$' }, noDouble]);
    const reHead = edited([{ id: 'r', reply_matches: '.*' }, noDouble]);
    expect(weakenings(diffSuites(reBase, reHead))).toHaveLength(1);
    const rowsBase = edited([{ id: 'rows', query: 'SELECT id FROM refunds', rows: [{ id: 1 }] }, noDouble]);
    const rowsHead = edited([{ id: 'rows', query: 'SELECT id FROM refunds', gte: 0 }, noDouble]);
    expect(weakenings(diffSuites(rowsBase, rowsHead)).map((c) => c.text)).toEqual([
      'scenario refund-twice: expectation rows loosened: rows dropped',
    ]);
  });

  it('call-count and table-list checks: widened bounds and lists weaken, narrowed ones do not', () => {
    const pair = (b: Raw, h: Raw) => diffSuites(edited([b]), edited([h])).map((c) => [c.weakens, c.text]);
    const called = { id: 'c', tool_called: { tool: 'refund_payment', min: 1, max: 1 } };
    expect(pair(called, { id: 'c', tool_called: { tool: 'refund_payment', min: 0 } })).toEqual([
      [
        true,
        'scenario refund-twice: expectation c loosened: tool_called.min lowered from 1 to 0, tool_called.max dropped',
      ],
    ]);
    expect(pair({ id: 'm', max_tool_calls: 4 }, { id: 'm', max_tool_calls: 40 })).toEqual([
      [true, 'scenario refund-twice: expectation m loosened: max_tool_calls raised from 4 to 40'],
    ]);
    expect(pair({ id: 'm', max_tool_calls: 4 }, { id: 'm', max_tool_calls: 3 })[0][0]).toBe(false);
    expect(
      pair({ id: 'o', only_changes: ['orders'] }, { id: 'o', only_changes: ['orders', 'customers'] }),
    ).toEqual([
      [true, 'scenario refund-twice: expectation o loosened: only_changes widened to allow customers'],
    ]);
    expect(
      pair({ id: 'o', only_changes: ['orders', 'refunds'] }, { id: 'o', only_changes: ['orders'] })[0][0],
    ).toBe(false);
    expect(
      pair(
        { id: 'f', forbid_changes: { table: 'orders', ops: ['update', 'delete'] } },
        { id: 'f', forbid_changes: { table: 'orders', ops: ['delete'] } },
      )[0],
    ).toEqual([
      true,
      'scenario refund-twice: expectation f loosened: forbid_changes.ops no longer lists update',
    ]);
    expect(pair({ id: 'x', outcome: 'FAILURE' }, { id: 'x', reply_contains: 'sorry' })[0]).toEqual([
      true,
      'scenario refund-twice: expectation x loosened: kind changed from outcome to reply_contains',
    ]);
    expect(
      pair(
        { id: 'j', judge: { criterion: 'polite', threshold: 0.8 } },
        { id: 'j', judge: { criterion: 'polite', threshold: 0.1 } },
      )[0],
    ).toEqual([
      true,
      'scenario refund-twice: expectation j loosened: judge.threshold lowered from 0.8 to 0.1',
    ]);
  });

  it('a filter is tightening only under the bounds it cannot break: fewer calls counted against a max weakens', () => {
    const pair = (b: Raw, h: Raw) => diffSuites(edited([b]), edited([h])).map((c) => [c.weakens, c.text]);
    const called = (spec: Raw) => ({ id: 'c', tool_called: { tool: 'refund_payment', ...spec } });
    // A head that refunds twice and counts only its first refund passes {min: 1, max: 1}.
    expect(pair(called({ min: 1, max: 1 }), called({ min: 1, max: 1, args: { amount: 10 } }))).toEqual([
      [
        true,
        'scenario refund-twice: expectation c loosened: tool_called.args narrowed: calls it leaves out no longer count against tool_called.max',
      ],
    ]);
    // max: 0 with a filter no call matches forbids nothing.
    expect(pair(called({ min: 0, max: 0 }), called({ min: 0, max: 0, args: { amount: -1 } }))[0][0]).toBe(
      true,
    );
    // Under a lower bound alone, counting fewer calls is stricter.
    expect(pair(called({ min: 1 }), called({ min: 1, args: { amount: 10 } }))).toEqual([
      [false, 'scenario refund-twice: expectation c tightened: tool_called.args narrowed'],
    ]);
    // Counting more calls keeps a max and breaks a min above zero.
    const filtered = (spec: Raw) => called({ ...spec, args: { amount: 10, order_id: 'ORD-1' } });
    expect(pair(filtered({ min: 0, max: 1 }), called({ min: 0, max: 1, args: { amount: 10 } }))[0]).toEqual([
      false,
      'scenario refund-twice: expectation c tightened: tool_called.args widened',
    ]);
    expect(pair(filtered({ min: 1 }), called({ min: 1, args: { amount: 10 } }))[0]).toEqual([
      true,
      'scenario refund-twice: expectation c loosened: tool_called.args no longer require order_id as before',
    ]);
    expect(
      pair(called({ min: 1, args: { amount: 10 } }), called({ min: 1, args: { amount: 20 } }))[0][0],
    ).toBe(true);
    // changes counts are exact: a where that counts other rows proves neither side.
    const changes = (spec: Raw) => ({ id: 'w', changes: { table: 'orders', updated: 1, ...spec } });
    expect(pair(changes({}), changes({ where: { id: 'ORD-1' } }))[0]).toEqual([
      true,
      'scenario refund-twice: expectation w loosened: changes.where narrowed: rows it leaves out no longer count against changes.updated',
    ]);
    expect(pair(changes({ where: { id: 'ORD-1' } }), changes({}))[0][0]).toBe(true);
  });

  it('allowed tools, initial state and input edits weaken; added faults and expectations do not', () => {
    const head = edited([refundOnce, noDouble, { id: 'extra', max_retries: 1 }], {
      tools: ['lookup_order'],
      state: { rows: { orders: [{ id: 'ORD-1', refund_count: 1 }] } },
      input: { message: 'hello' },
      faults: [fault, { tool: 'refund_payment', fault: 'server_error' }],
    });
    expect(texts(head)).toEqual([
      'ok: scenario refund-twice: expectation extra added',
      'ok: scenario refund-twice: fault server_error on refund_payment added',
      'weakens: scenario refund-twice: allowed tools changed from all to lookup_order',
      'weakens: scenario refund-twice: initial state changed',
      'weakens: scenario refund-twice: input changed',
    ]);
  });

  it('ignore_columns: a column the head ignores that the base does not weakens; one it stops ignoring does not', () => {
    const from = (ignore: Raw, config: Raw): SuiteShape => ({
      ...edited([refundOnce, noDouble], { ignore_columns: ignore }),
      config: suite({ config }).config,
    });
    const b = from({ audit_log: ['at'] }, { ignore_columns: { audit_log: ['at'] } });
    expect(diffSuites(b, b)).toEqual([]);
    const widened = from(
      { audit_log: ['at'], orders: ['refund_count'] },
      { ignore_columns: { audit_log: ['at'], orders: ['updated_at'] } },
    );
    expect(texts(widened, b)).toEqual([
      'weakens: scenario refund-twice: ignore_columns now also ignores orders.refund_count',
      'weakens: ignore_columns now also ignores orders.updated_at',
    ]);
    expect(weakenings(diffSuites(b, widened)).map((c) => c.kind)).toEqual([
      'scenario-edited',
      'ignore-columns-changed',
    ]);
    // Narrowed: the head shows more than the base did.
    expect(texts(from({}, {}), b)).toEqual([
      'ok: scenario refund-twice: ignore_columns no longer ignores audit_log.at',
      'ok: ignore_columns no longer ignores audit_log.at',
    ]);
  });

  it('twins, schema and fixtures: removed or changed weakens; added weakens where a scenario lists no tools', () => {
    const head: SuiteShape = {
      ...base,
      tools: new Map([
        ['refund_payment', tool('refund_payment', { risk: 'write', sql: 'SELECT 1' })],
        ['send_email', tool('send_email', { static: { ok: true } })],
      ]),
      files: { 'db/schema.sql': 'CREATE TABLE orders (id text);' },
      template: { schema: [{ file: 'db/schema.sql', sql: 'CREATE TABLE orders (id text);' }], fixtures: [] },
    };
    expect(texts(head)).toEqual([
      'weakens: twin tool refund_payment changed (sql)',
      "weakens: twin tool send_email added (scenarios happy and 1 more list no tools:, so their agents can call it in place of the base's tools)",
      'weakens: schema changed: db/schema.sql',
    ]);
    // Every shared scenario names its tools: the new one is out of their agents' reach.
    const listed = (s: SuiteShape): SuiteShape => ({
      ...s,
      scenarios: s.scenarios.map((x) => ({ ...x, tools: ['refund_payment'] })),
    });
    const added = new Map([...base.tools, ['send_email', tool('send_email', { static: { ok: true } })]]);
    expect(diffSuites(listed(base), listed({ ...base, tools: added })).map((c) => c.text)).toEqual([
      'twin tool send_email added',
    ]);
    expect(diffSuites(listed(base), listed({ ...base, tools: added }))[0].weakens).toBe(false);
    expect(texts({ ...base, tools: new Map() })).toEqual(['weakens: twin tool refund_payment removed']);
  });

  it('errors: on a twin tool added or changed weakens: a raised SQLSTATE becomes a graded answer', () => {
    const sql = 'UPDATE orders SET refund_count = refund_count + 1';
    const withErrors = (errors: Raw) =>
      new Map([['refund_payment', tool('refund_payment', { risk: 'write', sql, errors })]]);
    const listed = { ...base, tools: withErrors({ '23505': { status: 409, code: 'ALREADY_REFUNDED' } }) };
    expect(texts(listed)).toEqual(['weakens: twin tool refund_payment changed (errors)']);
    const remapped = { ...base, tools: withErrors({ '23505': { status: 409, code: 'DUPLICATE' } }) };
    expect(diffSuites(listed, remapped).map((c) => [c.weakens, c.text])).toEqual([
      [true, 'twin tool refund_payment changed (errors)'],
    ]);
  });

  it('policy: a gate class dropped and repeats lowered weaken; a class added does not', () => {
    const policy = (config: Raw) =>
      suite({ config, scenarios: base.scenarios, tools: [...base.tools.values()] });
    const strict = policy({
      repeats: 5,
      gate: { block: ['new-critical-failure', 'suite-weakened'], warn: ['regressed'] },
    });
    const loose = policy({ repeats: 1, gate: { block: [], warn: ['regressed', 'flaky'] } });
    expect(diffSuites(strict, loose).map((c) => [c.kind, c.weakens, c.text])).toEqual([
      ['gate-changed', true, 'gate.block no longer lists new-critical-failure, suite-weakened'],
      ['gate-changed', false, 'gate.warn now lists flaky'],
      ['repeats-changed', true, 'repeats lowered from 5 to 1'],
    ]);
    expect(diffSuites(loose, strict).filter((c) => c.kind === 'repeats-changed')[0].weakens).toBe(false);
    const judged = policy({ judge: { url: 'http://127.0.0.1:9/v1', model: 'm1' } });
    const other = policy({ judge: { url: 'http://127.0.0.1:9/v1', model: 'm2' } });
    expect(weakenings(diffSuites(judged, other)).map((c) => c.text)).toEqual(['judge.model changed']);
    const exposed = policy({ database: { expose: true } });
    expect(diffSuites(policy({}), exposed)).toEqual([
      {
        kind: 'database-changed',
        subject: 'database.expose',
        weakens: true,
        text: 'database.expose turned on: the agent can write its database directly',
      },
    ]);
    expect(diffSuites(exposed, policy({}))[0].weakens).toBe(false);
  });

  it('models: where a key goes (url, api, api_key_env) and a raised budget weaken; prices and a lowered budget do not', () => {
    const policy = (config: Raw) =>
      suite({ config, scenarios: base.scenarios, tools: [...base.tools.values()] });
    const openai = { api: 'openai', url: 'https://api.openai.com/v1', api_key_env: 'OPENAI_API_KEY' };
    const trusted = policy({ models: { openai }, budget: { run_usd: 5, episode_usd: 0.25 } });
    const redirected = policy({
      models: {
        openai: { ...openai, url: 'https://collector.example/v1', prices: { m: { input: 1, output: 1 } } },
      },
      budget: { run_usd: 500, episode_usd: 0.1 },
    });
    expect(diffSuites(trusted, redirected).map((c) => [c.kind, c.subject, c.weakens, c.text])).toEqual([
      ['models-changed', 'models.openai.url', true, 'models.openai.url changed'],
      ['models-changed', 'models.openai.prices', false, 'models.openai.prices changed'],
      ['models-changed', 'budget.run_usd', true, 'budget.run_usd changed from 5 USD to 500 USD'],
      ['models-changed', 'budget.episode_usd', false, 'budget.episode_usd changed from 0.25 USD to 0.1 USD'],
    ]);
    expect(diffSuites(policy({}), trusted).map((c) => [c.subject, c.weakens])).toEqual([
      ['models.openai', true],
      ['budget.run_usd', false],
      ['budget.episode_usd', false],
    ]);
  });
});

describe('repeatsWithFloor', () => {
  it('never goes below the base: fixed counts, ranges, and a mix', () => {
    expect(repeatsWithFloor(1, 5)).toBe(5);
    expect(repeatsWithFloor(8, 5)).toBe(8);
    expect(repeatsWithFloor({ min: 2, max: 10 }, 5)).toEqual({ min: 5, max: 10 });
    expect(repeatsWithFloor(3, { min: 8, max: 24 })).toEqual({ min: 8, max: 24 });
    expect(repeatsWithFloor({ min: 8, max: 30 }, { min: 4, max: 24 })).toEqual({ min: 8, max: 30 });
    expect(repeatsWithFloor({ min: 2, max: 4 }, { min: 4, max: 24 })).toEqual({ min: 4, max: 24 });
  });
});
