// Check-run annotations: one per changed expectation of each gated case, on its scenario file's line.
// The lines come from the case (the config loader read them when the run began): the checkout the
// head's agent could write to is never read here, so no link or FIFO it left behind is followed.
import { isAbsolute, join, relative, sep } from 'node:path';
import { DEFAULT_GATE, gateClassesOf } from '../gate/verdict.js';
import type { CaseReport, Report } from '../model/report.js';
import { clip, plainText } from '../report/escape.js';

// GitHub's limits: a title of 255 characters, a message of 64 KB (kept well under, in characters).
const TITLE_MAX = 255;
const MESSAGE_MAX = 16_000;
const LINE_MAX = 2_000;

/** An annotation's title: one line of plain text, within GitHub's limit. */
function title(text: string): string {
  return plainText(clip(text, TITLE_MAX));
}

/** An annotation's message: each line one line of plain text, the whole within the limit. */
function message(lines: (string | undefined)[]): string {
  const text = lines
    .filter((l): l is string => Boolean(l))
    .map((l) => plainText(clip(l, LINE_MAX)))
    .join('\n');
  return clip(text, MESSAGE_MAX);
}

/** A check-run annotation, in the REST API's own field names. */
export interface CheckAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: 'failure' | 'warning' | 'notice';
  title: string;
  message: string;
}

/**
 * The repository path of a scenario file named in a report; null for a path outside the repository,
 * which gets no annotation.
 */
export type RepositoryPath = (scenarioFile: string) => string | null;

/** At most this many annotations per run: past them a reviewer reads the summary, and each 50 is a request. */
export const MAX_ANNOTATIONS = 500;

/** The gate level of a case: failure when its class (or its flakiness) blocks, warning when it warns. */
export function caseLevel(report: Report, c: CaseReport): 'failure' | 'warning' | null {
  const gate = report.gate ?? DEFAULT_GATE;
  const classes = gateClassesOf(c);
  const hits = (list: readonly string[]) => classes.some((k) => list.includes(k));
  if (hits(gate.block)) return 'failure';
  if (hits(gate.warn)) return 'warning';
  return null;
}

/** Annotations for the cases the gate blocks (level failure) or warns about (level warning). */
export function caseAnnotations(report: Report, pathOf: RepositoryPath): CheckAnnotation[] {
  const out: CheckAnnotation[] = [];
  for (const c of report.cases) {
    if (out.length >= MAX_ANNOTATIONS) break;
    const level = caseLevel(report, c);
    if (level === null || !c.file) continue;
    const path = pathOf(c.file);
    if (path === null) continue;
    // A report without lines (written before cases carried them) annotates the file's first line.
    const top = c.lines?.scenario ?? 1;
    const evidence = [c.divergence?.sentence, ...c.state_diff.slice(0, 3).map(describeDiff)].filter(Boolean);
    const changed = (c.expectations_changed ?? []).filter(
      (e) => e.change !== 'fixed' && e.change !== 'pre-existing',
    );
    if (changed.length === 0) {
      out.push({
        path,
        start_line: top,
        end_line: top,
        annotation_level: level,
        title: title(`${c.id}: ${c.class}${c.flaky.head ? ' (flaky)' : ''}`),
        message: message([c.reason ?? `Scenario ${c.id} is ${c.class}.`, ...evidence]),
      });
      continue;
    }
    for (const e of changed) {
      // `completed` (the implicit expectation) has no line of its own: the scenario's is used.
      const line = c.lines?.expectations[e.id] ?? top;
      const counts = `failed in ${e.head.fail + e.head.error} of ${sum(e.head)} head runs, passed in ${e.base.pass} of ${sum(e.base)} base runs`;
      out.push({
        path,
        start_line: line,
        end_line: line,
        annotation_level: level,
        title: title(
          `${c.id}: ${e.critical ? 'critical ' : ''}expectation ${e.id} ${e.change === 'error' ? 'could not be evaluated' : 'broke'} (${c.class})`,
        ),
        message: message([`${e.id} ${counts}.`, e.message, ...evidence]),
      });
    }
  }
  return out.slice(0, MAX_ANNOTATIONS);
}

function sum(c: { pass: number; fail: number; error: number }): number {
  return c.pass + c.fail + c.error;
}

function describeDiff(d: CaseReport['state_diff'][number]): string {
  return `${d.table}[${d.key}].${d.column}: base ${JSON.stringify(d.base)}, head ${JSON.stringify(d.head)}`;
}

/**
 * Maps the report's scenario paths to repository paths: `suiteDir` is where the report's scenario
 * paths start (the config's directory), `repoRoot` what annotation paths are relative to. A path
 * that leaves the repository is refused; nothing is read from disk.
 */
export function repositoryPaths(repoRoot: string, suiteDir: string): RepositoryPath {
  return (scenarioFile) => {
    const abs = isAbsolute(scenarioFile) ? scenarioFile : join(suiteDir, scenarioFile);
    const rel = relative(repoRoot, abs);
    if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
    return rel.split(sep).join('/');
  };
}
