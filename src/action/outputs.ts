// The step's outputs ($GITHUB_OUTPUT): the verdict, where the report is, and one count per class.
import * as core from '@actions/core';
import { CaseClassName } from '../config/schema.js';
import type { Report } from '../model/report.js';

/** The outputs as name → value, in the order action.yml declares them. */
export function outputValues(report: Report, reportPath: string): [string, string][] {
  return [
    ['verdict', report.verdict],
    ['report-path', reportPath],
    ...CaseClassName.options.map((c): [string, string] => [c, String(report.counts[c] ?? 0)]),
  ];
}

/** Sets every output with core.setOutput. */
export function setOutputs(report: Report, reportPath: string): void {
  for (const [name, value] of outputValues(report, reportPath)) core.setOutput(name, value);
}
