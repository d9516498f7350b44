// The judge end to end: a `judge:` section and a `judge` expectation through runCompare, a real
// agent, real Postgres, and a loopback server speaking the chat-completions format.
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/compare.js';
import { ROOT } from '../helpers/demo-repo.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dirs: string[] = [];
let server: Server;
let url = '';
let status = 200;
const replies: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const messages = JSON.parse(raw).messages as { content: string }[];
      replies.push(messages[1].content);
      res.writeHead(status, { 'content-type': 'application/json' });
      const verdict = { label: 'pass', score: 0.9, quote: 'I have sent the receipt' };
      res.end(
        JSON.stringify({ choices: [{ message: { role: 'assistant', content: JSON.stringify(verdict) } }] }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The flaky agent's suite with a judge and one judge expectation on the unique-name scenario. */
function checkout(): string {
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
      'expect:\n  - id: tells-the-customer\n    judge: { criterion: "The reply says the receipt was sent", threshold: 0.7 }\n',
    ),
  );
  return dir;
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
});
