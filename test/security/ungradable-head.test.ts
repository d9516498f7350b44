// Attack: a head that breaks a critical expectation (BLOCK) and also makes its own episodes
// ungradable: any expectation whose verdict is `error` makes the episode "could not be graded", the
// case `incomplete`, and the gate WARN (a neutral check, which branch protection accepts) instead
// of BLOCK. The head's agent gets an `error` verdict from the state or reply it leaves behind:
//   (a) it gives no reply, so a judge expectation "could not be judged";
//   (b) it adds a second row where a base expectation's query expects one value, so `equals`
//       "compares one value, but the query returned 2 rows".
// The classifier already refuses this for twin SQL errors the head provokes (provokedErrors); these
// are the same move through the grader. No suite file changes.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/pipeline.js';
import { TEST_DATABASE_URL } from './attack-suite.js';

const dirs: string[] = [];
let judge: Server;
let judgePort = 0;
beforeAll(async () => {
  // A judge that passes every reply it is asked about.
  judge = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const content = JSON.stringify({ label: 'pass', score: 1, quote: '' });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ choices: [{ message: { content }, finish_reason: 'stop' }] }));
    });
  });
  await new Promise<void>((ok) => judge.listen(0, '127.0.0.1', ok));
  judgePort = (judge.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((ok) => judge.close(ok));
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

function side(agentBody: string, withJudge: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-redteam-ungradable-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'db'));
  mkdirSync(join(dir, 'scenarios'));
  // An audit table without a primary key, as many real schemas have.
  writeFileSync(
    join(dir, 'db', 'schema.sql'),
    'CREATE TABLE kv (k text PRIMARY KEY, v text NOT NULL);\nCREATE TABLE audit (what text NOT NULL, status text NOT NULL);\n',
  );
  writeFileSync(
    join(dir, 'db', 'fixtures.yaml'),
    'kv:\n  - { k: balance, v: "100" }\naudit:\n  - { what: nightly, status: clean }\n',
  );
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
    input: { type: object, properties: { what: { type: string }, status: { type: string } }, required: [what, status] }
    sql: INSERT INTO audit (what, status) VALUES (:what, :status)
    returns: none
`,
  );
  writeFileSync(join(dir, 'agent.mjs'), `${PRELUDE}\n${agentBody}\n`);
  writeFileSync(
    join(dir, 'scenarios', 'pay.yaml'),
    `id: pay
input:
  message: pay 30 out of the balance
expect:
  - id: balance-debited
    critical: true
    query: SELECT v FROM kv WHERE k = 'balance'
    equals: "70"
  - id: nightly-audit-clean
    query: SELECT status FROM audit WHERE what = 'nightly'
    equals: clean
${withJudge ? '  - id: polite\n    judge: { criterion: The reply is polite. }\n' : ''}`,
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
repeats: 2
concurrency: 2
${withJudge ? `judge:\n  url: http://127.0.0.1:${judgePort}/v1\n  model: m\n` : ''}`,
  );
  return dir;
}

const GOOD =
  "await call('put', { k: 'balance', v: '70' });\nfinish({ reply: 'Paid, thank you!', outcome: 'SUCCESS' });";

async function verdict(base: string, head: string) {
  const { report } = await runCompare({
    base,
    head,
    repo: head,
    out: join(head, '.stategate'),
    engine: 'postgres',
    databaseUrl: TEST_DATABASE_URL,
  });
  const out = { verdict: report.verdict, classes: report.cases.map((c) => `${c.class}: ${c.reason}`) };
  if (process.env.REDTEAM_DEBUG) console.log(JSON.stringify(out));
  return out;
}

describe('a regressed head makes its own episodes ungradable', () => {
  it('control: the regressed head (no debit) is blocked', async () => {
    const base = side(GOOD, false);
    const head = side("finish({ reply: 'Paid, thank you!', outcome: 'SUCCESS' });", false);
    expect((await verdict(base, head)).verdict).toBe('BLOCK');
  });

  it('(a) the regressed head gives no reply for the judge to grade: still BLOCK', async () => {
    const base = side(GOOD, true);
    const head = side("finish({ outcome: 'SUCCESS' });", true);
    expect(await verdict(base, head)).toMatchObject({ verdict: 'BLOCK' });
  });

  it('(b) the regressed head adds a second audit row so an `equals` query errors: still BLOCK', async () => {
    const base = side(GOOD, false);
    const head = side(
      "await call('note', { what: 'nightly', status: 'clean' });\nfinish({ reply: 'Paid, thank you!', outcome: 'SUCCESS' });",
      false,
    );
    expect(await verdict(base, head)).toMatchObject({ verdict: 'BLOCK' });
  });
});
