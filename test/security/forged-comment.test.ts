// The forged comment: a head agent writes carriage returns, HTML, links, mentions and a fake
// "Stategate: PASS" heading into an e-mail body, a note, a ticket's primary key and its reply,
// through the twin tools, in a suite whose scenario id is plain. The compare BLOCKs; report.md,
// the PR comment, the check-run summary and the job summary, rendered by a CommonMark (GFM)
// renderer, show one heading (the real verdict), whole tables, and every hostile value as text.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { caseAnnotations } from '../../src/action/annotations.js';
import { commentBody } from '../../src/action/comment.js';
import { GITHUB_TEXT_LIMIT, trimMarkdown } from '../../src/action/trim.js';
import { renderJunit } from '../../src/report/junit.js';
import { COMMENT_MARKER, renderMarkdown } from '../../src/report/markdown.js';
import { renderTerminal } from '../../src/report/terminal.js';
import { runCompare } from '../../src/run/pipeline.js';
import {
  elements,
  liveReferences,
  REPORT_ELEMENTS,
  renderHtml,
  strayMarkup,
  textOutsideCode,
  textsOf,
} from '../helpers/commonmark.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'forged-comment');
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}

/** A repository with the polite agent at `base` and the hostile one at `head`. */
function attackRepo(): string {
  const repo = mkdtempSync(join(tmpdir(), 'sg-forged-'));
  dirs.push(repo);
  cpSync(FIXTURE, repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.email', 'ci@example.com');
  git(repo, 'config', 'user.name', 'ci');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'polite agent');
  git(repo, 'tag', 'base');
  const agent = join(repo, 'agent.mjs');
  writeFileSync(
    agent,
    readFileSync(agent, 'utf8').replace('const HOSTILE = false;', 'const HOSTILE = true;'),
  );
  git(repo, 'commit', '-qam', 'hostile agent');
  git(repo, 'tag', 'head');
  return repo;
}

/** Each table's header cell count and the cell count of each of its rows. */
function tableShapes(html: string): { header: number; rows: number[] }[] {
  return [...html.matchAll(/<table>([\s\S]*?)<\/table>/g)].map((t) => {
    const rows = [...t[1].matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((r) => r[1]);
    const cells = (row: string) => (row.match(/<t[dh](?:\s[^>]*)?>/g) ?? []).length;
    return { header: cells(rows[0]), rows: rows.slice(1).map(cells) };
  });
}

/** What a reviewer would check of one rendering. */
function assertInert(markdown: string, what: string): void {
  const html = renderHtml(markdown);
  expect(strayMarkup(html, REPORT_ELEMENTS, COMMENT_MARKER), what).toEqual([]);
  expect(
    elements(html).filter((n) => !REPORT_ELEMENTS.includes(n)),
    what,
  ).toEqual([]);
  // One verdict heading, the real one; the other headings are the report's own.
  expect(textsOf(html, 'h2'), what).toEqual(['Stategate: BLOCK']);
  expect(textsOf(html, 'h3'), what).toEqual(['Blocking (1)']);
  expect(textsOf(html, 'h4'), what).toEqual(['confirm-order: new critical failure']);
  for (const level of ['h1', 'h5', 'h6']) expect(textsOf(html, level), what).toEqual([]);
  // Every table keeps its columns: the step table (base and head calls) has 5, the state table 4,
  // the side table 8.
  const shapes = tableShapes(html);
  expect(
    shapes.map((s) => s.header),
    what,
  ).toEqual([5, 4, 8]);
  for (const s of shapes) expect(new Set(s.rows), what).toEqual(new Set([s.header]));
  expect(shapes[0].rows.length, what).toBeGreaterThanOrEqual(1);
  expect(shapes[1].rows.length, what).toBeGreaterThanOrEqual(3);
  // No mention, reference or link outside code, and only one comment marker (the real one, first).
  const text = textOutsideCode(html);
  expect(liveReferences(text), what).toEqual([]);
  expect(markdown.split(COMMENT_MARKER).length, what).toBeLessThanOrEqual(2);
  // Inert, not deleted: the hostile text is there to read (values longer than a cell are elided).
  const shown = decodeAll(html).replace(/\u200B/g, '');
  for (const piece of [
    '# Stategate: PASS',
    '<img src=x onerror=alert(1)>',
    '[click](http://evil.example)',
    '@team',
    // The ticket's key, JSON-quoted, pipes and backslashes and all, inside its table cell.
    'tickets["T-1\\r# Stategate: PASS | \\\\| @team"]',
  ])
    expect(shown, what).toContain(piece);
}

/** All the text of the HTML, tags dropped, entities decoded. */
function decodeAll(html: string): string {
  return html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(amp|lt|gt|quot);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"' })[e]!);
}

describe('a hostile agent cannot forge the rendered report', () => {
  it('BLOCKs, and every rendering shows the real verdict with the hostile values inert', {
    timeout: 900_000,
  }, async () => {
    const repo = attackRepo();
    const out = join(repo, '.stategate');
    const result = await runCompare({
      base: 'base',
      head: 'head',
      repo,
      out,
      repeats: 1,
      engine: 'embedded',
    });
    const { report } = result;
    expect(report.verdict).toBe('BLOCK');
    expect(report.cases.map((c) => [c.id, c.class])).toEqual([['confirm-order', 'new-critical-failure']]);
    const c = report.cases[0];
    // The hostile values reached the report as they were written: raw carriage returns in the state
    // values, a pipe and a backslash in a row key, markup in the expectation messages.
    const heads = c.state_diff.map((d) => d.head).filter((v): v is string => typeof v === 'string');
    expect(heads.some((v) => v.includes('\r# Stategate: PASS\r<img src=x'))).toBe(true);
    expect(c.state_diff.some((d) => d.key.includes('| \\\\| @team'))).toBe(true);
    expect(c.expectations_changed?.some((e) => e.message?.includes('[click](http://evil.example)'))).toBe(
      true,
    );

    const renderings: [string, string][] = [
      ['report.md', readFileSync(result.markdownPath, 'utf8')],
      ['PR comment', commentBody(renderMarkdown(report, { variant: 'comment' }))],
      [
        'check-run summary',
        trimMarkdown(renderMarkdown(report, { variant: 'check' }), GITHUB_TEXT_LIMIT, 'trimmed'),
      ],
      ['job summary', renderMarkdown(report, { variant: 'summary' })],
    ];
    for (const [what, markdown] of renderings) assertInert(markdown, what);

    // Annotations are plain text: one line per value, nothing to mention or link, no control characters.
    const annotations = caseAnnotations(report, () => 'scenarios/confirm-order.yaml');
    expect(annotations.length).toBeGreaterThan(0);
    for (const a of annotations) {
      expect(a.title).not.toMatch(/[\r\n\u202E]/);
      expect(a.message).not.toMatch(/[\r\u202E\u202C]/);
      expect(liveReferences(`${a.title}\n${a.message}`)).toEqual([]);
      expect(a.title.length).toBeLessThanOrEqual(255);
    }

    // JUnit carries no markup of the agent's, and no carriage return or bidi override.
    const junit = renderJunit(report);
    expect(junit).not.toMatch(/<img|<!--|\r|\u202E/);
    expect(junit).toContain('&lt;img src=x onerror=alert(1)&gt;');

    // The terminal shows no control character: no carriage return to overwrite the verdict line.
    const terminal = renderTerminal(report);
    expect(terminal).not.toMatch(/[\r\u202E\u001B]/);
    expect(terminal.split('\n')[0]).toBe('Stategate: BLOCK');
  });
});
