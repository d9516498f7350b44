// The demo's BLOCK as a reviewer opens it: the real pair v1.2.4 → v1.3.0 run on the embedded engine,
// its report.html opened from disk in headless Chromium with every request refused and recorded.
// The page must need no network, its filters must pick the cases they name, and the headline case
// must show base and head side by side with the first difference, the double refund and the rows
// that differ marked.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot, writeDemoVersion } from '../../src/cli/demo.js';
import type { Report } from '../../src/model/report.js';
import { runCompare } from '../../src/run/pipeline.js';
import { launchChromium, type OpenedPage, openFile, violations } from '../helpers/chromium.js';

let work: string;
let html: string;
let report: Report;
let browser: Browser;
let opened: OpenedPage;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'stategate-html-demo-'));
  for (const v of ['v1.2.4', 'v1.3.0']) writeDemoVersion(projectRoot(), v, join(work, v));
  const result = await runCompare({
    base: 'v1.2.4',
    head: 'v1.3.0',
    repo: work,
    out: join(work, 'out'),
    engine: 'embedded',
  });
  report = result.report;
  html = result.htmlPath;
  browser = await launchChromium();
  opened = await openFile(browser, html);
});

afterAll(async () => {
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const rows = (page: OpenedPage['page']) =>
  page.locator('tr.case').evaluateAll((trs) => trs.map((t) => (t as HTMLElement).dataset.case));

describe("report.html of the demo's BLOCK", () => {
  it('is written beside report.md and report.json, and opens from disk with no request and no error', async () => {
    expect(html).toBe(join(work, 'out', 'report.html'));
    const size = statSync(html).size;
    process.stdout.write(`report.html of the demo: ${size} bytes\n`);
    expect(await opened.page.locator('[data-verdict]').textContent()).toBe('BLOCK');
    expect(opened.requests).toEqual([]);
    expect(opened.errors).toEqual([]);
    expect(await violations(opened.page)).toEqual([]);
    // Every case of report.json is listed.
    expect(await rows(opened.page)).toEqual(report.cases.map((c) => c.id));
  });

  it('filters: blocking, warning, changed, a class, a verdict and a search each show exactly their cases', async () => {
    const { page } = opened;
    const ids = (pred: (c: Report['cases'][number]) => boolean) => report.cases.filter(pred).map((c) => c.id);
    await page.click('button[data-filter=blocking]');
    expect(await rows(page)).toEqual(ids((c) => c.class === 'new-critical-failure'));
    expect((await rows(page)).length).toBe(2);
    await page.click('button[data-filter=warning]');
    expect(await rows(page)).toEqual(['refund-happy-path']);
    await page.click('button[data-filter=changed]');
    expect(await rows(page)).toEqual(ids((c) => c.class !== 'unchanged'));
    await page.click('button[data-filter=all]');
    await page.selectOption('select[data-filter-class]', 'unchanged');
    expect(await rows(page)).toEqual(ids((c) => c.class === 'unchanged'));
    await page.selectOption('select[data-filter-class]', '');
    await page.selectOption('select[data-filter-verdict]', 'PASS');
    expect(await rows(page)).toEqual(ids((c) => c.class === 'unchanged'));
    await page.selectOption('select[data-filter-verdict]', '');
    await page.fill('input[type=search]', 'TIMEOUT-after');
    expect(await rows(page)).toEqual(['refund-timeout-after-mutation']);
    expect(await page.locator('[data-count]').textContent()).toBe(`1 of ${report.cases.length} cases`);
  });

  it('opens the double refund side by side: repeats, the first difference, the repeated effect and the rows', async () => {
    const { page } = opened;
    await page.click('tr.case[data-case="refund-timeout-after-mutation"]');
    const detail = page.locator('tr[data-detail="refund-timeout-after-mutation"]');
    // Repeats as a strip: every base repeat passed, every head repeat failed.
    const strip = (side: string) =>
      detail
        .locator(`.side[data-side=${side}] .strip button`)
        .evaluateAll((bs) => bs.map((b) => b.className.split(' ')[0]));
    expect(await strip('base')).toEqual(['g-pass', 'g-pass', 'g-pass']);
    expect(await strip('head')).toEqual(['g-fail', 'g-fail', 'g-fail']);
    // The base read the policy at step 2; the head refunded at once: step 2 is marked.
    expect(await detail.locator('[data-first-difference]').getAttribute('data-first-difference')).toBe('2');
    const first = detail.locator('tr.step.first-diff');
    expect(await first.count()).toBe(1);
    expect(await first.getAttribute('data-step')).toBe('2');
    const cells = await first.locator('td').allTextContents();
    expect(cells[1]).toContain('get_refund_policy(');
    expect(cells[2]).toContain('refund_payment(');
    expect(cells[2]).toContain('504 TIMEOUT · fault timeout_after_mutation · applied');
    // Step 3 of the head refunds again: the same effect applied twice is marked on it.
    const third = await detail.locator('tr.step[data-step="3"] td').allTextContents();
    expect(third[2]).toContain('applied the effect of step 2 again');
    // The head's reply and the failing expectation's message are shown beside the base's.
    expect(await detail.locator('.side[data-side=head] pre.reply').textContent()).toMatch(/refund/i);
    const headResults = await detail.locator('.side[data-side=head] table.results').textContent();
    expect(headResults).toContain('refunded-exactly-once');
    // The rows: refund_count 1 against 2, and the email body's real difference highlighted.
    const marks = await detail.locator('table.rows tr.row-diff mark').allTextContents();
    expect(marks).toContain(' (refund 2)');
    const refundCount = detail.locator('table.rows tr.row-diff', { hasText: 'refund_count' });
    expect(await refundCount.locator('td').allTextContents()).toEqual([
      'orders[ORD-1101] update',
      'refund_count',
      '1',
      '2',
    ]);
    // The report's own state diff marks the same email text.
    expect(await detail.locator('table.state-diff mark').allTextContents()).toContain(' (refund 2)');
  });

  it('shows another pair when a repeat is chosen, and still requests nothing', async () => {
    const { page } = opened;
    const detail = page.locator('tr[data-detail="refund-timeout-after-mutation"]');
    await detail.locator('.side[data-side=head] .strip button[data-repeat="3"]').click();
    expect(await detail.locator('.side[data-side=head] .episode').getAttribute('data-episode')).toBe(
      'refund-timeout-after-mutation.head.r3',
    );
    expect(await detail.locator('h3', { hasText: 'Steps:' }).textContent()).toBe(
      'Steps: base repeat 1 and head repeat 3',
    );
    expect(opened.requests).toEqual([]);
    expect(opened.errors).toEqual([]);
    // The data block is the report as written (report.json beside it), not a re-telling of it.
    const data = await page.evaluate(() =>
      JSON.parse(document.getElementById('stategate-data')?.textContent ?? ''),
    );
    expect(data.report).toEqual(JSON.parse(readFileSync(join(work, 'out', 'report.json'), 'utf8')));
  });
});
