// `stategate demo --flaky` as a user runs it: the bundled command grades the seeded-random flaky
// agent, and the report names the step where its passing and failing repeats fork.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/model/report.js';
import { ROOT } from '../helpers/demo-repo.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const out = mkdtempSync(join(tmpdir(), 'sg-flaky-demo-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('stategate demo --flaky', () => {
  it('explains the flaky case by the step where its repeats fork', () => {
    const res = spawnSync(
      process.execPath,
      [join(ROOT, 'bin', 'stategate.mjs'), 'demo', '--flaky', '--engine', 'postgres', '--out', out],
      {
        cwd: out,
        encoding: 'utf8',
        env: { ...process.env, STATEGATE_DATABASE_URL: ADMIN_URL, CI: '1' },
        timeout: 300_000,
      },
    );
    expect(res.stderr).not.toMatch(/Error:|at .*\.js:\d+/);
    expect(res.status).toBe(0);

    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as Report;
    const shared = report.cases.find((c) => c.id === 'resend-receipt-shared-name')!;
    const unique = report.cases.find((c) => c.id === 'resend-receipt-unique-name')!;
    expect(shared.flaky.head).toBe(true);
    expect(unique.flaky.head).toBe(false);
    expect(shared.head!.runs).toBe(8);
    const passes = shared.head!.passes;
    expect(passes).toBeGreaterThan(0);
    expect(passes).toBeLessThan(8);

    // The lookup is the same in every repeat; the fork is which Sam Lee gets the email, and only
    // the argument that differs is shown.
    const why = shared.flaky_explanation?.head;
    const failing = 8 - passes;
    expect(why).toBe(
      `At step 2, after every repeat called find_customers(name="Sam Lee") and got 2 results, ` +
        `${passes} of 8 repeats called send_email(customer_id=CUS-7, …) and got 200 (applied) and passed; ` +
        `${failing === 1 ? 'the failing one' : `the ${failing} failing ones`} called send_email(customer_id=CUS-8, …) and got 200 (applied).`,
    );
    // The terminal report and the markdown say it too, with the repeat columns.
    expect(res.stdout).toContain(`flaky     head: ${why}`);
    const markdown = readFileSync(join(out, 'report.md'), 'utf8');
    expect(markdown).toContain('At step 2, after every repeat called');
    expect(res.stdout).toMatch(/ALL-N\s+PASSES/);
    expect(res.stdout).toMatch(/pass\^8/);
  });
});
