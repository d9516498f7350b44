// The finding a fault rule that never fired makes: the scenario says it tests the agent under that
// fault, but in no repeat of the side did the fault apply to a call (the agent never called the
// tool, or the `when` never matched). Found from report.json alone, shown beside the suite's changes.
import type { FaultFired, Report } from '../model/report.js';
import { mdCode, mdText } from './escape.js';
import { plural, SUITE_CHANGES_SHOWN } from './format.js';

/** One fault rule of one case and side that fired in none of the side's repeats. */
export interface UnfiredFault {
  case: string;
  side: 'base' | 'head';
  rule: FaultFired;
  runs: number;
}

/** Every fault rule that fired in no repeat of a side that ran, case by case, base before head. */
export function unfiredFaults(report: Report): UnfiredFault[] {
  const out: UnfiredFault[] = [];
  for (const c of report.cases) {
    for (const side of ['base', 'head'] as const) {
      const s = c[side];
      if (!s || s.runs === 0) continue;
      for (const rule of s.faults_fired ?? [])
        if (rule.repeats === 0) out.push({ case: c.id, side, rule, runs: s.runs });
    }
  }
  return out;
}

/** The title of the findings, with their count. */
export function unfiredFaultsTitle(found: readonly UnfiredFault[]): string {
  return `Faults that never fired (${found.length}): the scenario tested less than it says`;
}

/** What one finding says after its case id, e.g. "head: fault 1 (timeout_after_mutation on refund_payment) ...". */
export function unfiredFaultText(f: UnfiredFault): string {
  return `${f.side}: fault ${f.rule.rule} (${f.rule.fault} on ${f.rule.tool ?? `model ${f.rule.model}`}) applied to no call in ${f.runs === 1 ? 'the one repeat' : `any of ${plural(f.runs, 'repeat')}`}`;
}

/** The findings as markdown lines (a heading and a list), or none; every value escaped. */
export function unfiredFaultLines(report: Report): string[] {
  const found = unfiredFaults(report);
  if (found.length === 0) return [];
  const shown = found.slice(0, SUITE_CHANGES_SHOWN);
  const lines = ['', `### ${mdText(unfiredFaultsTitle(found))}`, ''];
  lines.push(...shown.map((f) => `- ${mdCode(f.case)} ${mdText(unfiredFaultText(f))}`));
  if (found.length > shown.length)
    lines.push(`- ${mdText(plural(found.length - shown.length, 'more'))} in report.json`);
  return lines;
}
