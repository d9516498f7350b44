// What the report attacks share: genuine report.json files built the way a run builds them, edits an
// attacker makes to them, and the bundled `stategate` command run as a user runs it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { compareSuite } from '../../src/compare/suite.js';
import type { CaseReport, Report } from '../../src/model/report.js';
import { ROOT } from '../helpers/demo-repo.js';
import { facts, regressedCase, timeoutCase, unchangedCase } from '../report/fixtures.js';

/** A genuine BLOCK: a double refund (new critical failure), a regression and two steady cases, as JSON. */
export function genuineBlock(): Report {
  const report = compareSuite({
    ...facts(),
    cases: [
      timeoutCase('refund-timeout-after-mutation'),
      regressedCase('email-after-refund'),
      unchangedCase('refund-happy-path'),
      unchangedCase('lookup-only'),
    ],
  });
  return JSON.parse(JSON.stringify(report));
}

/** A genuine PASS: steady cases only. */
export function genuinePass(): Report {
  const report = compareSuite({
    ...facts(),
    cases: [unchangedCase('refund-happy-path'), unchangedCase('lookup-only')],
  });
  return JSON.parse(JSON.stringify(report));
}

/** The cheap forgery: the verdict, the gate and the counts say PASS; the cases are left as they were. */
export function forgeVerdict(report: Report): Report {
  const forged: Report = JSON.parse(JSON.stringify(report));
  forged.verdict = 'PASS';
  forged.gate = { block: [], warn: [] };
  for (const k of Object.keys(forged.counts) as (keyof Report['counts'])[]) forged.counts[k] = 0;
  forged.counts.unchanged = forged.cases.length;
  return forged;
}

/** The careful forgery: every case's class and counts rewritten so the head looks like the base. */
export function forgeCounts(report: Report): Report {
  const forged = forgeVerdict(report);
  forged.cases = forged.cases.map((c): CaseReport => {
    const base = c.base!;
    return {
      ...c,
      class: 'unchanged',
      flaky: { base: false, head: false },
      head: JSON.parse(JSON.stringify(base)),
      divergence: null,
      state_diff: [],
      expectations_changed: [],
      reason: 'Both sides passed every expectation in every repeat (base 5, head 5).',
    };
  });
  return forged;
}

const made: string[] = [];

/** A fresh directory for one attack; removeScratch() removes them all. */
export function scratch(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `sg-${prefix}-`));
  made.push(dir);
  return dir;
}

export function removeScratch(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Writes a report (an object, or raw text) to `dir/rel`, creating directories. */
export function writeReport(dir: string, rel: string, report: unknown): string {
  const path = join(dir, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof report === 'string' ? report : `${JSON.stringify(report, null, 2)}\n`);
  return path;
}

export function readJson(path: string): Report {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** The bundled command (bin/stategate.mjs), in `cwd`. */
export function stategate(cwd: string, args: string[]) {
  const res = spawnSync(process.execPath, [join(ROOT, 'bin', 'stategate.mjs'), ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 120_000,
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}
