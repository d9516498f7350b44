// Check-run annotations: one per changed expectation of each gated case, on its scenario file's line.
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
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
 * Where in the repository a scenario (and optionally one of its expectations) is written; null for
 * a path outside the repository, which gets no annotation.
 */
export type Locate = (
  scenarioFile: string,
  expectationId: string | null,
) => { path: string; line: number } | null;

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
export function caseAnnotations(report: Report, locate: Locate): CheckAnnotation[] {
  const out: CheckAnnotation[] = [];
  for (const c of report.cases) {
    if (out.length >= MAX_ANNOTATIONS) break;
    const level = caseLevel(report, c);
    if (level === null || !c.file) continue;
    const evidence = [c.divergence?.sentence, ...c.state_diff.slice(0, 3).map(describeDiff)].filter(Boolean);
    const changed = (c.expectations_changed ?? []).filter(
      (e) => e.change !== 'fixed' && e.change !== 'pre-existing',
    );
    if (changed.length === 0) {
      const at = locate(c.file, null);
      if (!at) continue;
      out.push({
        path: at.path,
        start_line: at.line,
        end_line: at.line,
        annotation_level: level,
        title: title(`${c.id}: ${c.class}${c.flaky.head ? ' (flaky)' : ''}`),
        message: message([c.reason ?? `Scenario ${c.id} is ${c.class}.`, ...evidence]),
      });
      continue;
    }
    for (const e of changed) {
      const at = locate(c.file, e.id);
      if (!at) continue;
      const counts = `failed in ${e.head.fail + e.head.error} of ${sum(e.head)} head runs, passed in ${e.base.pass} of ${sum(e.base)} base runs`;
      out.push({
        path: at.path,
        start_line: at.line,
        end_line: at.line,
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
 * Locates scenarios on disk: `suiteDir` is where the report's scenario paths start (the config's
 * directory), `repoRoot` what annotation paths are relative to. Unreadable files fall back to line 1.
 */
export function scenarioLocator(repoRoot: string, suiteDir: string): Locate {
  const lines = new Map<string, { top: number; expectations: Map<string, number> }>();
  return (scenarioFile, expectationId) => {
    const abs = isAbsolute(scenarioFile) ? scenarioFile : join(suiteDir, scenarioFile);
    const rel = relative(repoRoot, abs);
    // A report names the file; a path that leaves the repository is not one to read or annotate.
    if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
    const path = rel.split(sep).join('/');
    let found = lines.get(abs);
    if (!found) {
      // Only a regular file whose real path is in the repository is read: the agent may have left a
      // link (to a file elsewhere, or a FIFO that would hang the read) in its writable checkout.
      found = regularFileInside(abs, repoRoot)
        ? expectationLines(abs)
        : { top: 1, expectations: new Map<string, number>() };
      lines.set(abs, found);
    }
    const line = (expectationId !== null ? found.expectations.get(expectationId) : undefined) ?? found.top;
    return { path, line };
  };
}

function regularFileInside(file: string, root: string): boolean {
  try {
    if (!lstatSync(file).isFile()) return false;
    const rel = relative(realpathSync(root), realpathSync(file));
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  } catch {
    return false;
  }
}

/** The line of a scenario's `id` and of each expectation's `id` (1-based). */
export function expectationLines(file: string): { top: number; expectations: Map<string, number> } {
  const expectations = new Map<string, number>();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { top: 1, expectations };
  }
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter });
  const lineOf = (offset: number | undefined) => (offset === undefined ? 1 : counter.linePos(offset).line);
  let top = 1;
  if (isMap(doc.contents)) {
    for (const pair of doc.contents.items) {
      if (!isScalar(pair.key)) continue;
      if (pair.key.value === 'id') top = lineOf(pair.key.range?.[0]);
      if (pair.key.value === 'expect' && isSeq(pair.value)) {
        for (const item of pair.value.items) {
          if (!isMap(item)) continue;
          const idPair = item.items.find((p) => isScalar(p.key) && p.key.value === 'id');
          if (idPair && isScalar(idPair.value))
            expectations.set(
              String(idPair.value.value),
              lineOf(idPair.key && isScalar(idPair.key) ? idPair.key.range?.[0] : item.range?.[0]),
            );
        }
      }
    }
  }
  return { top, expectations };
}
