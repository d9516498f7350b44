// The job summary ($GITHUB_STEP_SUMMARY), written through core.summary.
import * as core from '@actions/core';
import { trimMarkdown } from './trim.js';

// GitHub shows at most 1 MiB of summary per step.
const SUMMARY_LIMIT = 1_000_000;

/** Appends the markdown to the job summary; returns false when the runner gave no summary file. */
export async function writeSummary(markdown: string): Promise<boolean> {
  if (!process.env.GITHUB_STEP_SUMMARY) return false;
  const text = trimMarkdown(
    markdown,
    SUMMARY_LIMIT,
    '_The summary was trimmed; the full report is in report.json._',
  );
  await core.summary.addRaw(text, true).write();
  return true;
}
