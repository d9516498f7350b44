// An agent making 1,000 tool calls at once: every call is answered and every one is in the record,
// with its effect in the final state.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/pipeline.js';
import { kvSuite, readEpisodes, replyOf, TEST_DATABASE_URL } from './kv-suite.js';

const CALLS = 1000;
const dir = kvSuite({
  scenarios: ['flood'],
  agent: `
const results = await Promise.all(
  Array.from({ length: ${CALLS} }, (_, i) => call(url, 'put', { k: 'n', v: String(i) })),
);
const statuses = {};
for (const r of results) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
done({ statuses });
`,
  expect: `  - id: every-write-landed
    query: SELECT count(DISTINCT v) FROM kv WHERE k = 'n'
    equals: ${CALLS}
`,
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('an agent making 1,000 concurrent calls', () => {
  it('has every call in the record', { timeout: 180_000 }, async () => {
    const out = join(dir, 'out');
    const { report } = await runCompare({
      base: null,
      head: dir,
      repo: dir,
      out,
      engine: 'postgres',
      databaseUrl: TEST_DATABASE_URL,
    });
    const [g] = readEpisodes(out);
    expect(replyOf(g).statuses).toEqual({ 200: CALLS });
    const calls = g.record.calls;
    expect(calls).toHaveLength(CALLS);
    expect(calls.map((c) => c.seq).sort((a, b) => a - b)).toEqual(
      Array.from({ length: CALLS }, (_, i) => i + 1),
    );
    expect(new Set(calls.map((c) => (c.args as { v: string }).v)).size).toBe(CALLS);
    expect(calls.every((c) => c.status === 200 && c.mutated)).toBe(true);
    expect(g.record.diff.tables.kv.inserted).toHaveLength(CALLS);
    expect(g.passed).toBe(true);
    expect(report.cases[0].head?.passes).toBe(1);
  });
});
