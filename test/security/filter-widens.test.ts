// Attack: a head that refunds twice narrows the base's `tool_called` count with an args filter, so
// only the refund it means to show is counted; or it keeps `max: 0` and adds a filter no call
// matches, so the check forbids nothing. Both read as "tightened" once, and the run was PASS.
// Counting fewer calls against an upper bound weakens the suite: WARN under the base's gate, BLOCK
// when that gate blocks suite-weakened. Plain directories as base and head, on the postgres engine.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/pipeline.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';

const root = mkdtempSync(join(tmpdir(), 'sg-filter-widens-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const TWIN = `tools:
  refund:
    description: Refund an amount.
    risk: write
    input:
      type: object
      properties: { amount: { type: number } }
      required: [amount]
      additionalProperties: false
    sql: INSERT INTO refunds (amount) VALUES (:amount) RETURNING id, amount
    returns: one
`;

/** An agent that refunds each amount once, in order, and says it succeeded. */
function agent(amounts: number[]): string {
  return `for (const amount of ${JSON.stringify(amounts)}) {
  const res = await fetch(process.env.STATEGATE_TOOLS_URL + '/tools/refund', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount }),
  });
  await res.text();
}
process.stdout.write(JSON.stringify({ reply: 'refunded', outcome: 'SUCCESS' }) + '\\n');
`;
}

/** A checkout: the suite with one scenario whose only expectation is `toolCalled`, and its agent. */
function side(name: string, amounts: number[], toolCalled: string, gate = ''): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'scenarios'), { recursive: true });
  writeFileSync(
    join(dir, 'schema.sql'),
    'CREATE TABLE refunds (id serial PRIMARY KEY, amount numeric NOT NULL);\n',
  );
  writeFileSync(join(dir, 'twin.yaml'), TWIN);
  writeFileSync(join(dir, 'agent.mjs'), agent(amounts));
  writeFileSync(
    join(dir, 'scenarios', 'refund.yaml'),
    `id: refund\ninput:\n  message: refund ORD-1\nexpect:\n  - id: refunded-once\n    critical: true\n    tool_called: ${toolCalled}\n`,
  );
  writeFileSync(
    join(dir, 'stategate.yml'),
    `version: 1
agent:
  command: node agent.mjs
  timeout: 60s
database:
  schema: [schema.sql]
twins: [twin.yaml]
scenarios: [scenarios/*.yaml]
repeats: 1
${gate}`,
  );
  return dir;
}

async function compare(base: string, head: string) {
  const { report } = await runCompare({
    base,
    head,
    repo: root,
    out: join(root, 'out', `${base}-${head}`),
    engine: 'postgres',
    databaseUrl: TEST_DATABASE_URL,
  });
  return report;
}

describe('a head that narrows what tool_called counts', () => {
  it('adds args: {amount: 10} to {min: 1, max: 1} and refunds twice: WARN, the weakening named', {
    timeout: 300_000,
  }, async () => {
    side('once', [10], '{ tool: refund, min: 1, max: 1 }');
    side('twice', [10, 30], '{ tool: refund, min: 1, max: 1, args: { amount: 10 } }');
    const report = await compare('once', 'twice');
    // Graded by the head's own expectation, both sides pass: only the suite change can catch it.
    expect(report.cases.map((c) => `${c.id}: ${c.class}`)).toEqual(['refund: unchanged']);
    expect(report.suite_changes?.map((c) => [c.weakens, c.text])).toEqual([
      [
        true,
        'scenario refund: expectation refunded-once loosened: tool_called.args narrowed: calls it leaves out no longer count against tool_called.max',
      ],
    ]);
    expect(report.verdict).toBe('WARN');
    expect(report.gate_reasons?.map((r) => r.class)).toContain('suite-weakened');
  });

  it('keeps max: 0 and adds a filter no call matches: BLOCK under a base gate that blocks suite-weakened', {
    timeout: 300_000,
  }, async () => {
    const gate =
      'gate:\n  block: [new-critical-failure, suite-weakened]\n  warn: [regressed, incomplete, flaky]\n';
    side('never', [], '{ tool: refund, min: 0, max: 0 }', gate);
    side('refunds', [30], '{ tool: refund, min: 0, max: 0, args: { amount: -1 } }', gate);
    const report = await compare('never', 'refunds');
    expect(report.cases.map((c) => `${c.id}: ${c.class}`)).toEqual(['refund: unchanged']);
    expect(report.suite_changes?.filter((c) => c.weakens).map((c) => c.subject)).toEqual(['refund']);
    expect(report.verdict).toBe('BLOCK');
  });
});
