// Bench: report.html's size and load time in headless Chromium, for the demo's BLOCK (the real pair
// v1.2.4 → v1.3.0 on the embedded engine) and for a generated run of 200 cases x 5 repeats x 2 sides
// (2,000 episodes, 5 calls and 3 row changes each, one case in ten regressed). Each page is written
// the way a run writes it (report.json and episodes.jsonl read back by run/report-html.ts), opened
// from disk with every request refused, and loaded --loads times; the medians are printed.
// Run: node --import tsx bench/report-html.ts [--cases 200] [--repeats 5] [--loads 5] [--write]
// --write replaces its section of docs/performance.md (between its markers).
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { type Browser, chromium } from 'playwright-core';
import { projectRoot, writeDemoVersion } from '../src/cli/demo.js';
import type { CaseInput } from '../src/compare/case.js';
import { compareSuite } from '../src/compare/suite.js';
import type { GradedEpisode } from '../src/model/episode.js';
import { viewerScript } from '../src/report/html/viewer-script.js';
import { boundReport } from '../src/report/report-bounds.js';
import { runCompare } from '../src/run/pipeline.js';
import { writeHtmlReport } from '../src/run/report-html.js';
import { call, episode, scenario, stateDiff, tableDiff } from '../test/compare/builders.js';
import { benchArgs } from './args.js';

const { arg, flag } = benchArgs(import.meta.url, ['cases', 'repeats', 'loads'], ['write']);
const CASES = Number(arg('cases', '200'));
const REPEATS = Number(arg('repeats', '5'));
const LOADS = Number(arg('loads', '5'));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A generated run: every case refunds, e-mails and logs; one in ten refunds twice on the head. */
function generated(dir: string): string {
  const cases: CaseInput[] = [];
  const episodes: GradedEpisode[] = [];
  for (let i = 0; i < CASES; i++) {
    const id = `case-${String(i).padStart(4, '0')}`;
    const s = scenario(
      id,
      [{ id: 'refunded-once', critical: true }, { id: 'polite' }],
      `Generated case ${i}.`,
    );
    const side = (name: 'base' | 'head') =>
      Array.from({ length: REPEATS }, (_, r) => {
        const twice = name === 'head' && i % 10 === 0 && r % 2 === 0;
        const order = `ORD-${1000 + i}`;
        const calls = [
          call(
            'lookup_order',
            { order_id: order },
            { result: { id: order, total: '120.00', status: 'delivered' } },
          ),
          call('get_refund_policy', { order_id: order }, { result: { max_auto_refund: 100 } }),
          call(
            'refund_payment',
            { amount: 40, order_id: order },
            { mutated: true, result: { refund_id: 1 } },
          ),
          ...(twice
            ? [
                call(
                  'refund_payment',
                  { amount: 40, order_id: order },
                  { mutated: true, result: { refund_id: 2 } },
                ),
              ]
            : []),
          call(
            'send_email',
            {
              body: `We refunded $40.00 for ${order}${twice ? ' (refund 2)' : ''}. ${'Thanks. '.repeat(20)}`,
            },
            { mutated: true },
          ),
        ];
        const diff = stateDiff(
          tableDiff(
            'orders',
            ['id'],
            [[{ id: order }, { id: order, refund_count: 0 }, { id: order, refund_count: twice ? 2 : 1 }]],
          ),
          tableDiff(
            'emails',
            ['id'],
            [[{ id: 1 }, undefined, { id: 1, body: `We refunded $40.00 for ${order}` }]],
          ),
          tableDiff(
            'audit_log',
            ['id'],
            [[{ id: 1 }, undefined, { id: 1, at: new Date(Date.UTC(2026, 0, 1, 0, 0, r)).toISOString() }]],
          ),
        );
        const e = episode(s, name, r + 1, {
          calls,
          diff,
          ...(twice
            ? {
                verdicts: { 'refunded-once': 'fail' as const },
                messages: { 'refunded-once': 'expected 1, got 2' },
              }
            : {}),
          agent: {
            result: {
              reply: `Done: I refunded $40.00 for ${order}. ${'A confirmation is on its way. '.repeat(5)}`,
              outcome: 'SUCCESS',
            },
          },
        });
        for (const [k, c] of e.record.calls.entries()) c.seq = k + 1;
        return e;
      });
    const input = { scenario: s, base: side('base'), head: side('head') };
    cases.push(input);
    episodes.push(...input.base, ...input.head);
  }
  const report = boundReport(
    compareSuite({
      pin: { suite_hash: 'generated', template_hash: 'generated', scenarios: {} },
      sides: { base: { ref: 'main', sha: null }, head: { ref: 'feature', sha: null } },
      engine: 'postgres',
      repeats: REPEATS,
      episodesFile: 'episodes.jsonl',
      cases,
    }),
  );
  writeFileSync(join(dir, 'report.json'), JSON.stringify(report));
  writeFileSync(join(dir, 'episodes.jsonl'), episodes.map((e) => `${JSON.stringify(e)}\n`).join(''));
  return writeHtmlReport(report, dir);
}

interface Load {
  /** From navigation start to the end of DOMContentLoaded: the script has parsed the data and drawn the list. */
  ready: number;
  /** Opening the first changed case (its side-by-side view drawn), measured in the page. */
  open: number;
}

async function load(browser: Browser, file: string): Promise<Load> {
  const context = await browser.newContext();
  let requests = 0;
  await context.route('**/*', (route) => {
    if (route.request().url() === `file://${file}`) return route.continue();
    requests++;
    return route.abort();
  });
  const page = await context.newPage();
  await page.goto(`file://${file}`);
  await page.waitForSelector('tr.case');
  const ready = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
    return nav.domContentLoadedEventEnd;
  });
  const open = await page.evaluate(() => {
    const row = document.querySelector<HTMLElement>('button[data-filter=changed]');
    row?.click();
    const t = performance.now();
    document.querySelector<HTMLElement>('tr.case')?.click();
    return performance.now() - t;
  });
  await context.close();
  if (requests > 0) throw new Error(`${file} made ${requests} requests`);
  return { ready, open };
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(resolve('.'), '.stategate-bench-html-'));
  try {
    for (const v of ['v1.2.4', 'v1.3.0']) writeDemoVersion(projectRoot(), v, join(work, v));
    const demo = await runCompare({
      base: 'v1.2.4',
      head: 'v1.3.0',
      repo: work,
      out: join(work, 'demo'),
      engine: 'embedded',
    });
    const genDir = mkdtempSync(join(work, 'gen-'));
    const t = performance.now();
    const gen = generated(genDir);
    const writeMs = performance.now() - t;
    const browser = await chromium.launch({
      executablePath: process.env.STATEGATE_CHROMIUM ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--proxy-server=127.0.0.1:9'],
    });
    const rows: string[] = [];
    for (const [name, file, episodesFile] of [
      [
        'the demo (v1.2.4 → v1.3.0, 10 cases, 60 episodes)',
        demo.htmlPath,
        join(work, 'demo', 'episodes.jsonl'),
      ],
      [`generated: ${CASES} cases, ${CASES * REPEATS * 2} episodes`, gen, join(genDir, 'episodes.jsonl')],
    ] as const) {
      const loads: Load[] = [];
      for (let i = 0; i < LOADS; i++) loads.push(await load(browser, file));
      const bytes = statSync(file).size;
      const gz = gzipSync(readFileSync(file)).length;
      rows.push(
        `| ${name} | ${(bytes / 1024).toFixed(0)} KiB (${(gz / 1024).toFixed(0)} KiB gzipped) | ${(statSync(episodesFile).size / 1024).toFixed(0)} KiB | ${median(loads.map((l) => l.ready)).toFixed(0)} ms | ${median(loads.map((l) => l.open)).toFixed(1)} ms |`,
      );
    }
    await browser.close();
    const section = [
      BEGIN,
      '## 7. report.html (size and load time in headless Chromium)',
      '',
      `Measured by \`${['node --import tsx bench/report-html.ts', ...process.argv.slice(2)].join(' ')}\` on ${cpus().length} cores (${cpus()[0]?.model.trim()}), Chromium at ${process.env.STATEGATE_CHROMIUM ?? '/usr/bin/chromium'}, headless, opened from disk with every request refused (none was made); medians of ${LOADS} loads. *Ready* is navigation start to the end of DOMContentLoaded (the data parsed and the case list drawn); *open a case* is drawing the first changed case's side-by-side view.`,
      '',
      '| report | report.html | episodes.jsonl | ready | open a case |',
      '| --- | --- | --- | --- | --- |',
      ...rows,
      '',
      `Writing the generated page (reading back episodes.jsonl, projecting, rendering) took ${writeMs.toFixed(0)} ms in Node. The page keeps, per episode, the calls (arguments and replies cut to 600 characters, at most 50 calls), the row changes, the reply (4,000 characters), the stderr tail (4,000) and each expectation's message; the viewer script (no framework, ${(viewerScript().length / 1024).toFixed(1)} KiB minified) is inlined once whatever the size of the run. A case's side-by-side view is drawn only when it is opened, so the list of thousands of cases is what a load costs.`,
      END,
    ].join('\n');
    process.stdout.write(`${section}\n`);
    if (flag('write')) writeSection(section);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const BEGIN = '<!-- report-html:begin -->';
const END = '<!-- report-html:end -->';

function writeSection(section: string): void {
  const file = resolve(import.meta.dirname, '..', 'docs', 'performance.md');
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  writeFileSync(
    file,
    at >= 0 && end > at
      ? `${text.slice(0, at)}${section}${text.slice(end + END.length)}`
      : `${text.trimEnd()}\n\n${section}\n`,
  );
}

await main();
