// Attack: report.json's schema (REPORT_LIMITS) is what `merge` accepts; what `compare` writes
// must fit it, or a legitimate sharded run is refused at the merge ("Refused report.json"), and a
// head that wants its shard unmergeable needs only to write a long value. Here a head writes long
// values into the database, as a real agent may (an e-mail body, a JSON document): the report that
// compare wrote must pass merge's validation.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeReports } from '../../src/compare/merge.js';
import { runCompare } from '../../src/run/pipeline.js';
import { validateReport } from '../../src/run/read-report.js';
import { TEST_DATABASE_URL } from './attack-suite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const PRELUDE = `
async function call(tool, args) {
  const res = await fetch(process.env.STATEGATE_TOOLS_URL + '/tools/' + tool, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args),
  });
  return { status: res.status, body: await res.text() };
}
function finish(result) { process.stdout.write(JSON.stringify(result) + '\\n'); }
`;

function side(agentBody: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-redteam2-limits-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'db'));
  mkdirSync(join(dir, 'scenarios'));
  // A table without a primary key too: its rows are keyed by their content.
  writeFileSync(
    join(dir, 'db', 'schema.sql'),
    'CREATE TABLE kv (k text PRIMARY KEY, v text NOT NULL);\nCREATE TABLE notes (body text NOT NULL);\n',
  );
  writeFileSync(join(dir, 'db', 'fixtures.yaml'), 'kv:\n  - { k: doc, v: "short" }\n');
  writeFileSync(
    join(dir, 'twin.yaml'),
    `tools:
  put:
    risk: write
    input: { type: object, properties: { k: { type: string }, v: { type: string } }, required: [k, v] }
    sql: UPDATE kv SET v = :v WHERE k = :k
    returns: none
  note:
    risk: write
    input: { type: object, properties: { body: { type: string } }, required: [body] }
    sql: INSERT INTO notes (body) VALUES (:body)
    returns: none
`,
  );
  writeFileSync(join(dir, 'agent.mjs'), `${PRELUDE}\n${agentBody}\n`);
  writeFileSync(
    join(dir, 'scenarios', 'doc.yaml'),
    `id: doc
input:
  message: store the document
expect:
  - id: doc-stored
    query: SELECT v FROM kv WHERE k = 'doc'
    equals: "short"
`,
  );
  writeFileSync(
    join(dir, 'stategate.yml'),
    `version: 1
agent:
  command: node agent.mjs
database:
  schema: [db/schema.sql]
  fixtures: [db/fixtures.yaml]
twins: [twin.yaml]
scenarios: [scenarios/*.yaml]
repeats: 1
`,
  );
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
    const out = join(head, '.stategate');
    const { reportPath } = await runCompare({
      base,
      head,
      repo: head,
      out,
      engine: 'postgres',
      databaseUrl: TEST_DATABASE_URL,
    });
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
