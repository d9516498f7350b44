// Attack: a head that breaks a critical expectation (BLOCK) and also makes its own episodes
// ungradable: any expectation whose verdict is `error` makes the episode "could not be graded", the
// case `incomplete`, and the gate WARN (a neutral check, which branch protection accepts) instead
// of BLOCK. The head's agent gets an `error` verdict from the state or reply it leaves behind:
//   (a) it gives no reply, so a judge expectation "could not be judged";
//   (b) it adds a second row where a base expectation's query expects one value, so `equals`
//       "compares one value, but the query returned 2 rows".
// The classifier already refuses this for twin SQL errors the head provokes (provokedErrors); these
// are the same move through the grader. No suite file changes.

import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answer, type ChatServer, completion, startChatServer } from '../helpers/chat-server.js';
import { CALL_TOOL, compareOnTestServer, NODE_AGENT, UPDATE_PUT, writeSuite } from './suite.js';

const dirs: string[] = [];
let judge: ChatServer;
beforeAll(async () => {
  // A judge that passes every reply it is asked about.
  judge = await startChatServer((_body, _req, res) =>
    answer(res, 200, completion(JSON.stringify({ label: 'pass', score: 1, quote: '' }))),
  );
});
afterAll(async () => {
  await judge.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function side(agentBody: string, withJudge: boolean): string {
  const dir = writeSuite({
    // An audit table without a primary key, as many real schemas have.
    schema:
      'CREATE TABLE kv (k text PRIMARY KEY, v text NOT NULL);\nCREATE TABLE audit (what text NOT NULL, status text NOT NULL);\n',
    fixtures: 'kv:\n  - { k: balance, v: "100" }\naudit:\n  - { what: nightly, status: clean }\n',
    twin: `tools:
${UPDATE_PUT}  note:
    risk: write
    input: { type: object, properties: { what: { type: string }, status: { type: string } }, required: [what, status] }
    sql: INSERT INTO audit (what, status) VALUES (:what, :status)
    returns: none
`,
    agentFiles: { 'agent.mjs': `${CALL_TOOL}\n${agentBody}\n` },
    agent: NODE_AGENT,
    scenarios: ['pay'],
    message: 'pay 30 out of the balance',
    expect: `  - id: balance-debited
    critical: true
    query: SELECT v FROM kv WHERE k = 'balance'
    equals: "70"
  - id: nightly-audit-clean
    query: SELECT status FROM audit WHERE what = 'nightly'
    equals: clean
${withJudge ? '  - id: polite\n    judge: { criterion: The reply is polite. }\n' : ''}`,
    engine: 'postgres',
    repeats: 2,
    extra: withJudge ? `judge:\n  url: ${judge.url}\n  model: m\n` : '',
  });
  dirs.push(dir);
  return dir;
}

const GOOD =
  "await call('put', { k: 'balance', v: '70' });\nfinish({ reply: 'Paid, thank you!', outcome: 'SUCCESS' });";

async function verdict(base: string, head: string) {
  const { report } = await compareOnTestServer(head, base);
  const out = { verdict: report.verdict, classes: report.cases.map((c) => `${c.class}: ${c.reason}`) };
  if (process.env.STATEGATE_TEST_DEBUG) console.log(JSON.stringify(out));
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
