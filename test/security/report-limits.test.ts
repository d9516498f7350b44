// Attack: report.json's schema (REPORT_LIMITS) is what `merge` accepts; what `compare` writes
// must fit it, or a legitimate sharded run is refused at the merge ("Refused report.json"), and a
// head that wants its shard unmergeable needs only to write a long value. Here a head writes long
// values into the database, as a real agent may (an e-mail body, a JSON document): the report that
// compare wrote must pass merge's validation.
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeReports } from '../../src/compare/merge.js';
import { validateReport } from '../../src/run/read-report.js';
import { CALL_TOOL, compareOnTestServer, NODE_AGENT, UPDATE_PUT, writeSuite } from './suite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function side(agentBody: string): string {
  const dir = writeSuite({
    // A table without a primary key too: its rows are keyed by their content.
    schema:
      'CREATE TABLE kv (k text PRIMARY KEY, v text NOT NULL);\nCREATE TABLE notes (body text NOT NULL);\n',
    fixtures: 'kv:\n  - { k: doc, v: "short" }\n',
    twin: `tools:
${UPDATE_PUT}  note:
    risk: write
    input: { type: object, properties: { body: { type: string } }, required: [body] }
    sql: INSERT INTO notes (body) VALUES (:body)
    returns: none
`,
    agentFiles: { 'agent.mjs': `${CALL_TOOL}\n${agentBody}\n` },
    agent: NODE_AGENT,
    scenarios: ['doc'],
    message: 'store the document',
    expect: `  - id: doc-stored
    query: SELECT v FROM kv WHERE k = 'doc'
    equals: "short"
`,
    engine: 'postgres',
  });
  dirs.push(dir);
  return dir;
}

describe('what compare writes, merge accepts', () => {
  it('a head that stores a 150,000-character document (and a long note) still yields a mergeable report', async () => {
    const base = side(
      "await call('put', { k: 'doc', v: 'short' });\nfinish({ reply: 'ok', outcome: 'SUCCESS' });",
    );
    const head = side(
      [
        "const big = 'lorem ipsum '.repeat(12500);",
        "await call('put', { k: 'doc', v: big });",
        "await call('note', { body: big.slice(0, 30000) });",
        "finish({ reply: big.slice(0, 30000), outcome: 'SUCCESS' });",
      ].join('\n'),
    );
    const { reportPath } = await compareOnTestServer(head, base);
    const written = JSON.parse(readFileSync(reportPath, 'utf8'));
    expect(written.cases[0].class).toBe('regressed');
    let refused = '';
    try {
      mergeReports([validateReport(written, 'report.json')]);
    } catch (err) {
      refused = (err as Error).message;
    }
    expect(refused).toBe('');
  }, 120_000);
});
