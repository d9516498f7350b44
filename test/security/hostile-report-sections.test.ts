// Attack: the sections added after the first review (suite changes, the policy line, the
// unverified sentence, the sides notes and dirty labels, the isolation line, missing shards, the
// baseline cache line)
// filled with hostile strings, as a fork's report.json may carry them through `merge`. Rendered,
// they must add no markup and no live reference, and never a second comment marker.
import { describe, expect, it } from 'vitest';
import { checkTitle } from '../../src/action/check-run.js';
import type { Report } from '../../src/model/report.js';
import { COMMENT_MARKER, renderMarkdown } from '../../src/report/markdown.js';
import { renderTerminal } from '../../src/report/terminal.js';
import {
  liveReferences,
  REPORT_ELEMENTS,
  renderHtml,
  strayMarkup,
  textOutsideCode,
} from '../helpers/commonmark.js';
import { HOSTILE } from '../helpers/hostile.js';
import { sampleReport } from '../report/fixtures.js';

function withNewSections(payload: string): Report {
  const r = sampleReport();
  const one = (s: string) => s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
  return {
    ...r,
    sides: {
      base: r.sides.base ? { ...r.sides.base, ref: one(`main${payload}`), dirty: true } : null,
      head: { ref: one(`head${payload}`), sha: r.sides.head?.sha ?? null, dirty: true },
    },
    identical_sides: true,
    unverified: { reason: `fork${payload}` },
    agent_isolation: { mode: 'process-groups', note: `groups${payload}` },
    policy_from: { side: 'head', reason: `because${payload}` },
    engine_reason: `engine${payload}`,
    missing_shards: [2, 3],
    baseline_cache: {
      key: 'a'.repeat(64),
      hit: false,
      reused_episodes: 0,
      stored_at: null,
      saved: false,
      note: `not stored${payload}`,
    },
    suite_changes: [
      { kind: 'scenario-removed', subject: one(`s${payload}`), weakens: true, text: `removed${payload}` },
      { kind: 'gate-changed', subject: one(`g${payload}`), weakens: true, text: `gate${payload}` },
      { kind: 'twin-added', subject: one(`t${payload}`), weakens: false, text: `twin${payload}` },
    ],
  };
}

describe('hostile strings in the new report sections', () => {
  for (const payload of HOSTILE) {
    it(`render inert with ${JSON.stringify(payload).slice(0, 50)}`, () => {
      const report = withNewSections(payload);
      for (const variant of ['comment', 'check', 'summary'] as const) {
        const markdown = renderMarkdown(report, { variant });
        const html = renderHtml(markdown);
        // The new sections are there to attack.
        expect(markdown).toMatch(/Suite changes against the base/);
        expect(markdown).toMatch(/Unverified: /);
        expect(markdown).toMatch(/base: nothing reused from the cache \(cache key a{12}\); not stored/);
        expect(strayMarkup(html, REPORT_ELEMENTS, COMMENT_MARKER), variant).toEqual([]);
        expect(liveReferences(textOutsideCode(html)), variant).toEqual([]);
        expect(markdown.split(COMMENT_MARKER).length, variant).toBe(variant === 'comment' ? 2 : 1);
      }
      expect(checkTitle(report)).not.toMatch(/[\r\n\u202E]/);
      expect(renderTerminal(report)).not.toMatch(/[\r\u202E\u0000\u001B\u2028]/);
    });
  }
});
