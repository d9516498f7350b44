// Attack: a head whose agent writes an instant as text with another offset. `changes.where` compared
// a changed row's values by their form, so a text column holding `2025-10-12T12:00:00+02:00` was
// taken for `2025-10-12T10:00:00Z`: an expectation on what was written passed on a value that is not
// it. Row diffs now compare by the column's type, as query results do: in a text column the two
// differ, in a timestamptz column they are one instant; and base and head finals that are one value
// of their type (150 and 150.00 in numeric) are no state difference. On every engine.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stateDifferences } from '../../src/compare/state-diff.js';
import type { StateDiff } from '../../src/model/episode.js';
import { runCompare } from '../../src/run/pipeline.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { CALL_TOOL, writeSuite } from './suite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SCHEMA = `CREATE TABLE shipments (
  id int PRIMARY KEY, at_text text, at timestamptz, amount numeric(10,2) NOT NULL DEFAULT 0
);
`;
const FIXTURES = 'shipments:\n  - { id: 1 }\n';
const TWIN = `tools:
  stamp:
    description: Record when a shipment left.
    risk: write
    input: { type: object, properties: { at: { type: string }, amount: { type: number } }, required: [at, amount] }
    sql: UPDATE shipments SET at_text = CAST(:at AS text), at = CAST(CAST(:at AS text) AS timestamptz), amount = :amount WHERE id = 1
    returns: none
`;
const agent = (amount: string) => `${CALL_TOOL}
await call('stamp', { at: '2025-10-12T12:00:00+02:00', amount: ${amount} });
done('stamped');
`;
const SCENARIO = `id: stamp
input:
  message: stamp it
expect:
  - id: text-holds-utc
    changes: { table: shipments, updated: 1, where: { at_text: "2025-10-12T10:00:00Z" } }
  - id: text-holds-what-was-written
    changes: { table: shipments, updated: 1, where: { at_text: "2025-10-12T12:00:00+02:00" } }
  - id: instant-is-utc
    changes: { table: shipments, updated: 1, where: { at: "2025-10-12T10:00:00Z" } }
`;

function suite(engine: 'embedded' | 'postgres', amount: string): string {
  const dir = writeSuite({
    twin: TWIN,
    agentFiles: { 'agent.mjs': agent(amount) },
    agent: '  command: node agent.mjs\n  timeout: 30s',
    expect: '',
    scenarios: [],
    engine,
    schema: SCHEMA,
  });
  dirs.push(dir);
  writeFileSync(join(dir, 'db', 'fixtures.yaml'), FIXTURES);
  writeFileSync(join(dir, 'scenarios', 'stamp.yaml'), SCENARIO);
  return dir;
}

async function diffOf(dir: string, engine: 'embedded' | 'postgres') {
  const out = join(dir, 'out');
  const { report } = await runCompare({
    base: null,
    head: dir,
    repo: dir,
    out,
    engine,
    databaseUrl: engine === 'postgres' ? TEST_DATABASE_URL : undefined,
  });
  const [line] = readFileSync(join(out, 'episodes.jsonl'), 'utf8').split('\n');
  return { report, diff: JSON.parse(line).record.diff as StateDiff };
}

describe.each(['postgres', 'embedded'] as const)('on the %s engine, a changed row', (engine) => {
  it("compares by its column's type", { timeout: 300_000 }, async () => {
    const { report, diff } = await diffOf(suite(engine, '150'), engine);
    const counts = report.cases[0].head!.expectations;
    expect(counts['text-holds-utc']).toMatchObject({ pass: 0, fail: 1 });
    expect(counts['text-holds-what-was-written']).toMatchObject({ pass: 1, fail: 0 });
    expect(counts['instant-is-utc']).toMatchObject({ pass: 1, fail: 0 });
    expect(diff.tables.shipments.columnTypes).toMatchObject({
      at_text: 'text',
      at: 'timestamptz',
      amount: 'numeric',
    });

    // The same final values written as 150 and 150.00 are one numeric value: no state difference.
    const other = await diffOf(suite(engine, '150.00'), engine);
    expect(stateDifferences(diff, other.diff).differences).toEqual([]);
    // A text column whose instants are one moment but not one text is a difference.
    const shifted = structuredClone(other.diff);
    shifted.tables.shipments.updated[0].after!.at_text = '2025-10-12T10:00:00Z';
    shifted.tables.shipments.updated[0].after!.at = '2025-10-12T10:00:00.000Z';
    expect(stateDifferences(diff, shifted).differences).toEqual([
      expect.objectContaining({ table: 'shipments', column: 'at_text', head: '2025-10-12T10:00:00Z' }),
    ]);
  });
});
