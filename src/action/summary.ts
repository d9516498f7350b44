// The job summary ($GITHUB_STEP_SUMMARY), written through core.summary.
import * as core from '@actions/core';
import { trimMarkdown } from './trim.js';

// GitHub shows at most 1 MiB of summary per step.
const SUMMARY_LIMIT = 1_000_000;

/** The job summary as written: the markdown trimmed under the step's limit, with a note when cut. */
export function jobSummaryText(markdown: string): string {
  return trimMarkdown(
    markdown,
    SUMMARY_LIMIT,
    '_The summary was trimmed; the full report is in report.json._',
  );
}

/** Appends the markdown to the job summary; returns false when the runner gave no summary file. */
export async function writeSummary(markdown: string): Promise<boolean> {
  if (!process.env.GITHUB_STEP_SUMMARY) return false;
  await core.summary.addRaw(jobSummaryText(markdown), true).write();
  return true;
}
