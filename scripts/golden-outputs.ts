// The golden outputs of a report: every text a user reads, rendered from one report.json exactly as
// the CLI and the action render it (report.md, the PR comment body, the check run, the job summary,
// the terminal and JUnit). Shared by scripts/goldens.ts, which writes them, and the golden test,
// which compares them byte for byte. Also the normalisation that makes a real run's report.json a
// stable fixture: its volatile fields (times, durations, latencies) set to fixed values.
import { checkRunSummary, checkTitle } from '../src/action/check-run.js';
import { commentBody } from '../src/action/comment.js';
import { jobSummaryText } from '../src/action/summary.js';
import type { GradedEpisode } from '../src/model/episode.js';
import type { Report, SideSummary } from '../src/model/report.js';
import { viewerData } from '../src/report/html/viewer-data.js';
import { renderJunit } from '../src/report/junit.js';
import { renderMarkdown } from '../src/report/markdown.js';
import { renderTerminal } from '../src/report/terminal.js';

/** The fixtures, one directory each under test/report/golden/, and where their report.json comes from. */
export const GOLDEN_SETS = {
  /** `npm run demo`'s first pair: the "faster refunds" rewrite against v1.2.4. */
  demo: 'the demo, v1.2.4 → v1.3.0',
  /** `stategate run` on the demo at v1.3.0: the head alone. */
  'head-only': 'stategate run on the demo at v1.3.0',
  /** Built by test/report/fixtures.ts: every class, a crashed head and a case still failing. */
  sample: 'the sample report of the report tests',
} as const;

/** The sets whose report.json is a fixture from a real run; the others are built by code. */
export const RUN_SETS = ['demo', 'head-only'] as const;

export type GoldenSet = keyof typeof GOLDEN_SETS;

/**
 * Every output of one report, by file name. report.html is kept as the data it embeds (its pixels
 * are the browser tests' business), with the episodes when the set has them.
 */
export function goldenOutputs(
  report: Report,
  episodes: GradedEpisode[] | null = null,
): Record<string, string> {
  const check = checkRunSummary(renderMarkdown(report, { variant: 'check' }));
  return {
    'report.md': renderMarkdown(report, { variant: 'comment' }),
    'comment.md': commentBody(renderMarkdown(report, { variant: 'comment' })),
    'check-run.md': `<!-- check run title: ${checkTitle(report)} -->\n${check}`,
    'job-summary.md': jobSummaryText(renderMarkdown(report, { variant: 'summary' })),
    'terminal.txt': renderTerminal(report, { color: false }),
    'junit.xml': renderJunit(report),
    'report-html-data.json': `${JSON.stringify(viewerData(report, episodes), null, 2)}\n`,
  };
}

/**
 * Fixed values for what differs from run to run; everything else stays as the run wrote it. A new
 * report.json field that varies between runs (a time, a path, a count of cache hits) belongs here.
 */
export const NORMAL = {
  startedAt: '2026-01-01T00:00:00.000Z',
  durationMs: 60_000,
  latencyMs: 1_000,
} as const;

function normalSide(s: SideSummary | null): SideSummary | null {
  if (!s?.metrics) return s;
  return { ...s, metrics: { ...s.metrics, latencyMs: NORMAL.latencyMs } };
}

/** A real run's report.json with its volatile fields set to NORMAL (a copy; the input is unchanged). */
export function normaliseReport(report: Report): Report {
  const out: Report = { ...report };
  if (out.started_at !== undefined) out.started_at = NORMAL.startedAt;
  if (out.duration_ms !== undefined) out.duration_ms = NORMAL.durationMs;
  out.cases = report.cases.map((c) => ({
    ...c,
    base: normalSide(c.base),
    head: normalSide(c.head) as SideSummary,
  }));
  return out;
}

/**
 * The shape of a report for comparing a fresh run with its fixture: the keys present at every level
 * (of any element of an array) and each case's class, never the values that vary.
 */
export function reportShape(report: Report): { keys: string[]; classes: Record<string, string> } {
  const keys = new Set<string>();
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item, `${path}[]`);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    for (const [k, v] of Object.entries(value)) {
      // Maps keyed by data (expectation ids, k, signatures, scenario ids) are one key each.
      const name = /^(expectations|pass_at_k|pass_hat_k|signatures|scenarios|seeds|labels|counts)$/.test(
        path.split('.').at(-1) ?? '',
      )
        ? '*'
        : k;
      keys.add(`${path}.${name}`);
      walk(v, `${path}.${name}`);
    }
  };
  walk(report, '');
  return {
    keys: [...keys].sort(),
    classes: Object.fromEntries(report.cases.map((c) => [c.id, c.class])),
  };
}
