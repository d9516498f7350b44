// A report whose every string says something hostile: case ids, files, descriptions, reasons,
// trajectories, step tables, an agent's stderr, state rows and values, expectation ids, labels and messages, refs, the engine's
// reason, even the verdict — as a forged shard report or a compromised run might hold them. Each
// rendering must have exactly the structure the honest report renders to, and nothing live.
import { describe, expect, it } from 'vitest';
import { caseAnnotations } from '../../src/action/annotations.js';
import type { Report } from '../../src/model/report.js';
import { renderJunit } from '../../src/report/junit.js';
import { COMMENT_MARKER, renderMarkdown } from '../../src/report/markdown.js';
import { renderTerminal } from '../../src/report/terminal.js';
import {
  elements,
  liveReferences,
  REPORT_ELEMENTS,
  renderHtml,
  strayMarkup,
  textOutsideCode,
} from '../helpers/commonmark.js';
import { HOSTILE } from '../helpers/hostile.js';
import { goldenSampleReport } from '../report/fixtures.js';

// Fields the renderers branch on (classes, kinds of change, the gate's lists): a forged value
// there changes which sections exist, which is the merge's validation to refuse, not rendering's.
// (`outcome`: a representative repeat's passed / failed / not graded decides whether its reply shows.)
const LOGIC = new Set(['class', 'change', 'kind', 'gate', 'op', 'outcome']);

/** A copy of the report with `payload` appended to every string but the ones the logic reads. */
function poisoned(report: Report, payload: string): Report {
  const walk = (value: unknown, key: string): unknown => {
    if (LOGIC.has(key)) return value;
    // A reason's level is logic too (the schema allows BLOCK or WARN); its text and case ids are not.
    if (key === 'gate_reasons')
      return (value as NonNullable<Report['gate_reasons']>).map((r) => ({
        ...r,
        cases: r.cases.map((id) => `${id}${payload}`),
        text: `${r.text}${payload}`,
      }));
    if (typeof value === 'string') return `${value}${payload}`;
    if (Array.isArray(value)) return value.map((v) => walk(v, key));
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
    return value;
  };
  return walk(structuredClone(report), '') as Report;
}

// Every class, a step table, a crashed agent's stderr tail and a case still failing.
const honest = goldenSampleReport();
const variants = ['comment', 'check', 'summary'] as const;
const shapes = Object.fromEntries(
  variants.map((v) => [v, elements(renderHtml(renderMarkdown(honest, { variant: v })))]),
);

describe('a report full of hostile strings renders exactly like the honest one', () => {
  // The verdict is one of the strings: its heading may say more, never be another heading.
  for (const payload of [...HOSTILE, HOSTILE.join('\r')]) {
    it(`with ${JSON.stringify(payload).slice(0, 60)} in every string`, () => {
      const forged = poisoned(honest, payload);
      for (const variant of variants) {
        const markdown = renderMarkdown(forged, { variant });
        const html = renderHtml(markdown);
        expect(strayMarkup(html, REPORT_ELEMENTS, COMMENT_MARKER), variant).toEqual([]);
        // Long payloads push the comment over its limit: then what is shown is cut, never added to.
        if (markdown.includes('\n**Trimmed**')) {
          const names = elements(html);
          expect(names.filter((n) => n === 'h2')).toHaveLength(1);
          expect(names.filter((n) => /^h[156]$/.test(n))).toEqual([]);
        } else expect(elements(html), variant).toEqual(shapes[variant]);
        expect(liveReferences(textOutsideCode(html)), variant).toEqual([]);
        expect(markdown.split(COMMENT_MARKER).length, variant).toBe(variant === 'comment' ? 2 : 1);
      }
      // Cut to a small limit, what is left is still whole lines: nothing opens that does not close.
      for (const limit of [1_500, 3_000, 5_000]) {
        const html = renderHtml(renderMarkdown(forged, { variant: 'check', limit }));
        expect(strayMarkup(html, REPORT_ELEMENTS), `limit ${limit}`).toEqual([]);
        expect(elements(html).filter((n) => /^h[156]$/.test(n))).toEqual([]);
        expect(liveReferences(textOutsideCode(html)), `limit ${limit}`).toEqual([]);
      }
      for (const a of caseAnnotations(forged, () => 'scenarios/x.yaml')) {
        // Only the zero-width spaces that break mentions and links are left of the invisible characters.
        expect(a.title.replace(/\u200B/g, '')).not.toMatch(/[\p{Cc}\p{Cf}]/u);
        expect(a.message.replace(/\n/g, '')).not.toMatch(/[\p{Cc}\u202A-\u202E\u2066-\u2069]/u);
        expect(liveReferences(`${a.title}\n${a.message}`)).toEqual([]);
      }
      const junit = renderJunit(forged);
      expect(junit).not.toMatch(/[\r\u202E\u0000\u001B]|<img|<script|<!-- stategate/);
      const terminal = renderTerminal(forged);
      expect(terminal).not.toMatch(/[\r\u202E\u0000\u001B\u2028]/);
    });
  }
});
