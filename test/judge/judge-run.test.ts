// The judge end to end: a `judge:` section and a `judge` expectation through runCompare, a real
// agent, real Postgres, and a loopback server speaking the chat-completions format. The judge passes
// a reply that says the receipt was sent, and fails any other.
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/pipeline.js';
import { answer, type ChatServer, completion, startChatServer } from '../helpers/chat-server.js';
import { ROOT } from '../helpers/demo-repo.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dirs: string[] = [];
let chat: ChatServer;
let url = '';
let status = 200;
const replies: string[] = [];

beforeAll(async () => {
  chat = await startChatServer((body, _req, res) => {
    const messages = body.messages as { content: string }[];
    replies.push(messages[1].content);
    const sent = messages[1].content.includes('I have sent the receipt');
    const verdict = sent
      ? { label: 'pass', score: 0.9, quote: 'I have sent the receipt' }
      : { label: 'fail', score: 0.1, quote: '' };
    answer(res, status, completion(JSON.stringify(verdict)));
  });
  url = chat.url;
});

afterAll(async () => {
  await chat.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const CRITERION = 'The reply says the receipt was sent';

/** The flaky agent's suite with a judge and one judge expectation on the unique-name scenario. */
function checkout(opts: { critical?: boolean; reply?: string } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-judge-'));
  dirs.push(dir);
  cpSync(join(ROOT, 'examples', 'flaky-agent'), join(dir, 'examples', 'flaky-agent'), { recursive: true });
  cpSync(join(ROOT, 'examples', 'refund-agent'), join(dir, 'examples', 'refund-agent'), { recursive: true });
  const suite = join(dir, 'examples', 'flaky-agent');
  appendFileSync(
    join(suite, 'stategate.yml'),
    `judge:\n  url: ${url}\n  model: judge-model\n  timeout: 5s\n`,
  );
  const scenario = join(suite, 'scenarios', 'resend-receipt-unique-name.yaml');
  const text = readFileSync(scenario, 'utf8');
  expect(text).toMatch(/^expect:\n/m);
  writeFileSync(
    scenario,
    text.replace(
      /^expect:\n/m,
      `expect:\n  - id: tells-the-customer\n    critical: ${opts.critical ?? false}\n    judge: { criterion: "${CRITERION}", threshold: 0.7 }\n`,
    ),
  );
  if (opts.reply) {
    // This side's agent says something else once the receipt is sent: the judge fails it.
    const agent = join(suite, 'agent.mjs');
    const code = readFileSync(agent, 'utf8');
    const next = code.replace(
      '`I have sent the receipt to the email address on your account, ${name}.`',
      JSON.stringify(opts.reply),
    );
    expect(next).not.toBe(code);
    writeFileSync(agent, next);
  }
  return dir;
}

/** A calibration file beside the suite's stategate.yml, calibrating the criterion for `model`. */
function calibrate(dir: string, model: string): void {
  const entry = {
    criterion: CRITERION,
    model,
    labels: 20,
    judge_errors: 0,
    n: 20,
    agreement: 1,
    kappa: 1,
    table: { both_pass: 10, judge_pass_human_fail: 0, judge_fail_human_pass: 0, both_fail: 10 },
    calibrated: true,
    why_not: [],
  };
  writeFileSync(
    join(dir, 'examples', 'flaky-agent', 'judge-calibration.json'),
    JSON.stringify({ version: 1, criteria: [entry] }, null, 2),
  );
}

/** Base and head as directories: the head's agent no longer says the receipt was sent. */
async function pair(base: string, head: string) {
  const { report } = await runCompare({
    base,
    head,
    repo: head,
    out: join(head, '.stategate'),
    config: 'examples/flaky-agent/stategate.yml',
    repeats: 1,
    engine: 'postgres',
    databaseUrl: ADMIN_URL,
  });
  return { report, judged: report.cases.find((c) => c.id === 'resend-receipt-unique-name')! };
}

async function run(dir: string) {
  const { report } = await runCompare({
    base: null,
    head: dir,
    repo: dir,
    out: join(dir, '.stategate'),
    config: 'examples/flaky-agent/stategate.yml',
    repeats: 1,
    engine: 'postgres',
    databaseUrl: ADMIN_URL,
  });
  return report.cases.find((c) => c.id === 'resend-receipt-unique-name')!;
}

describe('judge expectations in a run', () => {
  it('grade the reply with the judge, and an unavailable judge makes the case incomplete', async () => {
    const dir = checkout();
    status = 200;
    const judged = await run(dir);
    expect(replies.some((r) => r.includes('The reply says the receipt was sent'))).toBe(true);
    expect(judged.head!.expectations['tells-the-customer']).toMatchObject({ pass: 1, fail: 0, error: 0 });

    status = 429;
    const limited = await run(dir);
    expect(limited.head!.expectations['tells-the-customer']).toMatchObject({ pass: 0, fail: 0, error: 1 });
    expect(limited.class).toBe('incomplete');
  });

  it('a critical judge expectation that fails on head only warns while its criterion is uncalibrated', {
    timeout: 300_000,
  }, async () => {
    status = 200;
    const base = checkout({ critical: true });
    const head = checkout({ critical: true, reply: 'Done.' });
    const { report, judged } = await pair(base, head);
    expect(judged.head!.expectations['tells-the-customer']).toMatchObject({
      fail: 1,
      critical: true,
      uncalibrated: true,
    });
    expect(judged.class).toBe('regressed');
    expect(judged.expectations_changed![0]).toMatchObject({
      id: 'tells-the-customer',
      change: 'broke',
      critical: true,
      uncalibrated: true,
    });
    expect(judged.reason).toBe(
      'Critical expectation tells-the-customer failed in 1 of 1 head repeats and passed in all 1 base repeats; its judge criterion is uncalibrated for this judge model, so it warns instead of blocking.',
    );
    expect(report.verdict).toBe('WARN');
    expect(report.judge_calibration).toEqual({
      model: 'judge-model',
      file: null,
      sha256: null,
      calibrated: [],
    });
    const md = readFileSync(join(head, '.stategate', 'report.md'), 'utf8');
    expect(md).toContain('`tells-the-customer` (critical, judge uncalibrated, JUDGE_FAIL)');

    // A calibration made with another model does not count.
    calibrate(base, 'another-model');
    const other = await pair(base, head);
    expect(other.judged.class).toBe('regressed');
    expect(other.report.judge_calibration).toMatchObject({ file: 'judge-calibration.json', calibrated: [] });
  });

  it("the same failure blocks once the base's calibration covers the criterion for the judge model", {
    timeout: 300_000,
  }, async () => {
    status = 200;
    const base = checkout({ critical: true });
    const head = checkout({ critical: true, reply: 'Done.' });
    // The calibration is policy: the base's counts, the head's own file does not.
    calibrate(head, 'judge-model');
    const unbelieved = await pair(base, head);
    expect(unbelieved.judged.class).toBe('regressed');
    expect(unbelieved.report.judge_calibration).toMatchObject({ file: null, calibrated: [] });
    calibrate(base, 'judge-model');
    const { report, judged } = await pair(base, head);
    expect(judged.head!.expectations['tells-the-customer'].uncalibrated).toBeUndefined();
    expect(judged.class).toBe('new-critical-failure');
    expect(judged.reason).not.toContain('uncalibrated');
    expect(report.verdict).toBe('BLOCK');
    expect(report.judge_calibration).toMatchObject({
      model: 'judge-model',
      file: 'judge-calibration.json',
      calibrated: [CRITERION],
    });
  });
});
