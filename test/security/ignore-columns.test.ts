// Attack: a head that ignores the very column its regression changes. `ignore_columns` keeps volatile
// columns (`DEFAULT now()`) out of the base/head state differences; a head adding one to hide what it
// changed must not turn BLOCK into PASS: expectations that name the column still read it, the
// addition is a weakening suite change, and under base policy stategate.yml's list is the base's.
// Also on the real server: a `DEFAULT now()` column differs in every pair of runs and the ignore list
// removes it, and a name the template lacks is a problem at its file:line.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stateDifferences } from '../../src/compare/state-diff.js';
import type { StateDiff } from '../../src/model/episode.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { runCompare } from '../../src/run/pipeline.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { CALL_TOOL, compareOnTestServer, stategate, writeSuite } from './suite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SCHEMA = `CREATE TABLE refunds (
  id int PRIMARY KEY, amount numeric(10,2) NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp()
);
`;
const TWIN = `tools:
  refund:
    description: Refund an amount.
    risk: write
    input: { type: object, properties: { amount: { type: number } }, required: [amount] }
    sql: INSERT INTO refunds (id, amount) VALUES (1, :amount)
    returns: none
`;
const agent = (amount: number) => `${CALL_TOOL}
await call('refund', { amount: ${amount} });
done('refunded');
`;
const scenario = (ignore: string) => `id: refund
input:
  message: refund 40
expect:
  - id: refunds-forty
    critical: true
    changes: { table: refunds, inserted: 1, where: { amount: 40 } }
${ignore}`;

function suite(amount: number, scenarioIgnore: string, configIgnore = ''): string {
  const dir = writeSuite({
    twin: TWIN,
    agentFiles: { 'agent.mjs': agent(amount) },
    agent: '  command: node agent.mjs\n  timeout: 30s',
    expect: '',
    scenarios: [],
    engine: 'postgres',
    schema: SCHEMA,
    fixtures: null,
    extra: configIgnore,
  });
  dirs.push(dir);
  writeFileSync(join(dir, 'scenarios', 'refund.yaml'), scenario(scenarioIgnore));
  return dir;
}

async function diffOf(dir: string): Promise<StateDiff> {
  const out = join(dir, 'out');
  await runCompare({
    base: null,
    head: dir,
    repo: dir,
    out,
    engine: 'postgres',
    databaseUrl: TEST_DATABASE_URL,
  });
  const [line] = readFileSync(join(out, 'episodes.jsonl'), 'utf8').split('\n');
  return JSON.parse(line).record.diff as StateDiff;
}

describe('ignore_columns on the postgres engine', () => {
  it('removes a DEFAULT clock_timestamp() column from the differences of two real runs', {
    timeout: 300_000,
  }, async () => {
    const a = await diffOf(suite(40, ''));
    const b = await diffOf(suite(40, ''));
    const plain = stateDifferences(a, b);
    // Two runs never write the same instant: without the list, the column is all the diff shows.
    expect(plain.differences.map((d) => `${d.table}[${d.key}].${d.column}`)).toEqual(['refunds[1].at']);
    expect(plain.ignored).toEqual([]);
    const ignored = stateDifferences(a, b, undefined, 20, { refunds: ['at'] });
    expect(ignored).toEqual({ differences: [], cut: 0, ignored: ['refunds.at'] });
  });

  it('a head ignoring the column its regression changes still blocks', { timeout: 300_000 }, async () => {
    const base = suite(40, '');
    // The head refunds ten times the amount and ignores both columns it wrote.
    const head = suite(400, 'ignore_columns: { refunds: [at] }\n', 'ignore_columns:\n  refunds: [amount]\n');
    const { report } = await compareOnTestServer(head, base);
    expect(report.verdict).toBe('BLOCK');
    const [c] = report.cases;
    // The expectation naming `amount` still read it on the head.
    expect(c.head!.expectations['refunds-forty']).toMatchObject({ pass: 0, fail: 1 });
    // Under base policy stategate.yml's list is the base's (none): the amount still shows; the
    // scenario's own list hides `at` and says so.
    expect(c.state_diff).toEqual([
      expect.objectContaining({
        table: 'refunds',
        key: '1',
        column: 'amount',
        base: '40.00',
        head: '400.00',
      }),
    ]);
    expect(c.ignored_columns).toEqual(['refunds.at']);
    const weak = (report.suite_changes ?? []).filter((s) => s.weakens).map((s) => s.text);
    expect(weak).toEqual(
      expect.arrayContaining([
        'scenario refund: ignore_columns now also ignores refunds.at',
        'ignore_columns now also ignores refunds.amount',
      ]),
    );
    expect(renderMarkdown(report)).toContain('Ignored columns (differ, not shown): `refunds.at`');
  });

  it('names a table or column the template lacks at its file:line', { timeout: 300_000 }, async () => {
    const dir = suite(
      40,
      'ignore_columns:\n  refund: [at]\n  refunds: [att]\n',
      'ignore_columns: { refunds: [amont] }\n',
    );
    const res = await stategate(dir, ['validate', '--engine', 'postgres'], {
      STATEGATE_DATABASE_URL: TEST_DATABASE_URL,
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /^scenarios\/refund\.yaml:9:3: ignore_columns\.refund: unknown table 'refund': expected a table of the template \(refunds\); did you mean 'refunds'\?/m,
    );
    expect(res.stderr).toMatch(
      /^scenarios\/refund\.yaml:10:13: ignore_columns\.refunds\[0\]: unknown column 'att' of table 'refunds': expected one of id, amount, at; did you mean 'at'\?/m,
    );
    expect(res.stderr).toMatch(
      /^stategate\.yml:\d+:\d+: ignore_columns\.refunds\[0\]: unknown column 'amont' of table 'refunds': .*; did you mean 'amount'\?/m,
    );
  });
});
