// Hostile strings in report.html stay text: an agent's reply, stderr and call arguments, row values,
// a scenario's description, a ref and a forged report's case id, each written to break out of the
// data block, inject markup, run script, load a resource or follow a `javascript:` link. The page is
// opened from disk in headless Chromium; nothing may execute, no element may appear from the data,
// no request may leave, and every string must read back exactly as it was.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseInput } from '../../src/compare/case.js';
import { compareSuite } from '../../src/compare/suite.js';
import type { GradedEpisode } from '../../src/model/episode.js';
import { dataBlock, renderHtml } from '../../src/report/html/page.js';
import { viewerData } from '../../src/report/html/viewer-data.js';
import { call, repeats, scenario, stateDiff, tableDiff } from '../compare/builders.js';
import { launchChromium, type OpenedPage, openFile, violations } from '../helpers/chromium.js';
import { HOSTILE } from '../helpers/hostile.js';
import { facts } from './fixtures.js';

/** Each tries something else: end the block, run script, load a resource, follow a link, template. */
const PAYLOADS = [
  '</script><img src=x onerror="window.__pwned=1;alert(1)">',
  '<script>window.__pwned=2;alert(2)</script>',
  '<svg onload="window.__pwned=3"></svg><iframe src="javascript:window.top.__pwned=4"></iframe>',
  'javascript:window.__pwned=5',
  '<a href="javascript:window.__pwned=6">click</a>',
  '<!--<script>window.__pwned=7</script>-->',
  '<style>body{background:url(http://evil.example/css)}</style><link rel=stylesheet href=http://evil.example/l>',
  '<meta http-equiv="refresh" content="0;url=http://evil.example/">',
  'line\u2028sep\u2029para </SCRIPT >  </sCrIpT\t>',
  "{{constructor.constructor('window.__pwned=8')()}} ${window.__pwned=9}",
];
const HOSTILE_ID = `refund-${PAYLOADS[0]}`;
const REPLY = PAYLOADS.join(' | ');

function hostileCase(): { input: CaseInput; episodes: GradedEpisode[] } {
  const s = scenario('refund-hostile', [{ id: 'refunded-once', critical: true }], PAYLOADS[2]);
  const diff = (body: string) =>
    stateDiff(tableDiff('emails', ['id'], [[{ id: 1 }, undefined, { id: 1, body, subject: PAYLOADS[6] }]]));
  const calls = () => [
    call(
      'send_email',
      { body: PAYLOADS[0], to: PAYLOADS[3] },
      { mutated: true, result: { echo: PAYLOADS[1] } },
    ),
  ];
  const base = repeats(s, 'base', [{ calls: calls(), diff: diff('fine') }]);
  const head = repeats(s, 'head', [
    {
      calls: calls(),
      diff: diff(PAYLOADS[4]),
      verdicts: { 'refunded-once': 'fail' },
      messages: { 'refunded-once': PAYLOADS[5] },
      agent: { stderr: PAYLOADS.join('\n'), result: { reply: REPLY, outcome: 'SUCCESS' } },
    },
  ]);
  return { input: { scenario: s, base, head }, episodes: [...base, ...head] };
}

let work: string;
let file: string;
let browser: Browser;
let opened: OpenedPage;

beforeAll(async () => {
  const { input, episodes } = hostileCase();
  const report = compareSuite({
    ...facts({ sides: { base: { ref: PAYLOADS[3], sha: null }, head: { ref: PAYLOADS[1], sha: null } } }),
    cases: [input],
  });
  // A forged report's case id: ids from a run are checked, a page must not rely on it.
  report.cases[0].id = HOSTILE_ID;
  for (const e of episodes) e.record.scenario = HOSTILE_ID;
  report.cases[0].reason = HOSTILE.join(' ');
  work = mkdtempSync(join(tmpdir(), 'stategate-html-hostile-'));
  file = join(work, 'report.html');
  writeFileSync(file, renderHtml(viewerData(report, episodes)));
  browser = await launchChromium();
  opened = await openFile(browser, `${file}`);
});

afterAll(async () => {
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('report.html with hostile strings', () => {
  it('keeps every string inside the data block: no `<`, U+2028 or U+2029 in it', () => {
    const html = readFileSync(file, 'utf8');
    const start = html.indexOf('<script type="application/json" id="stategate-data">');
    const block = html.slice(start, html.indexOf('</script>', start));
    const json = block.slice(block.indexOf('>') + 1);
    expect(json).not.toMatch(/[<\u2028\u2029]/);
    // Exactly the page's two script elements: the data block and the viewer.
    expect(html.match(/<script/gi)?.length).toBe(2);
    expect(
      dataBlock({
        report: JSON.parse('{"a":"</script>\u2028"}'),
        episodes: null,
        files: { report: 'r', episodes: null },
      }),
    ).toBe(
      '{"report":{"a":"\\u003c/script>\\u2028"},"episodes":null,"files":{"report":"r","episodes":null}}',
    );
  });

  it('opens every part of the case (the #case= link too) with nothing executed, loaded or injected', async () => {
    const { page } = opened;
    await page.evaluate((id) => {
      location.hash = `case=${encodeURIComponent(id)}`;
    }, HOSTILE_ID);
    await page.reload();
    await page.waitForSelector('.side[data-side=head] pre.reply');
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(opened.dialogs).toEqual([]);
    expect(opened.requests).toEqual([]);
    expect(opened.errors).toEqual([]);
    expect(await violations(page)).toEqual([]);
    // No element the data could have made: no image, frame, svg, link, style sheet or extra script.
    const counts = await page.evaluate(() => ({
      dangerous: document.querySelectorAll(
        'img, iframe, svg, a, link, object, embed, meta[http-equiv=refresh]',
      ).length,
      scripts: document.querySelectorAll('script').length,
      styles: document.querySelectorAll('style').length,
      handlers: [...document.querySelectorAll('*')].filter((el) =>
        [...el.attributes].some((a) => /^on/i.test(a.name)),
      ).length,
    }));
    expect(counts).toEqual({ dangerous: 0, scripts: 2, styles: 1, handlers: 0 });
  });

  it('shows each hostile string as its own text, exactly', async () => {
    const { page } = opened;
    const detail = page.locator('tr.case-detail').first();
    expect(await detail.locator('.side[data-side=head] pre.reply').textContent()).toBe(REPLY);
    expect(await detail.locator('.side[data-side=head] pre.stderr').textContent()).toBe(PAYLOADS.join('\n'));
    expect(await page.locator('tr.case td.mono').first().textContent()).toBe(HOSTILE_ID);
    const results = await detail.locator('.side[data-side=head] table.results').textContent();
    expect(results).toContain(PAYLOADS[5]);
    const steps = await detail.locator('tr.step td').allTextContents();
    expect(steps.join('')).toContain(JSON.stringify({ body: PAYLOADS[0], to: PAYLOADS[3] }));
    // The differing row value is marked as text, the rest of the value around it kept.
    const marked = await detail.locator('table.rows td.differs').allTextContents();
    expect(marked.join('')).toContain(PAYLOADS[4]);
    expect(await page.locator('.facts').textContent()).toContain(PAYLOADS[1]);
    expect(await page.locator('tr.case-detail').first().textContent()).toContain(
      HOSTILE.join(' ').slice(0, 40),
    );
  });
});
