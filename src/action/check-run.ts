// The `stategate` check run on the head commit: in_progress when work starts, completed with the verdict.
import { weakenings } from '../compare/suite-changes.js';
import { checkConclusion } from '../gate/verdict.js';
import type { Report } from '../model/report.js';
import { caseLabel, headOnly } from '../report/format.js';
import { verdictWords } from '../report/unverified.js';
import type { CheckAnnotation } from './annotations.js';
import type { GitHub } from './github.js';
import { GITHUB_TEXT_LIMIT, trimMarkdown } from './trim.js';

export const CHECK_NAME = 'stategate';
/**
 * The check of results the base repository did not make. GitHub counts a neutral check as passing a
 * required one, so unverified results never report under the name a branch protection rule requires.
 */
export const UNVERIFIED_CHECK_NAME = 'stategate (unverified)';
/** The Checks API takes at most 50 annotations per request; more go in further updates. */
export const ANNOTATIONS_PER_REQUEST = 50;

/** The repository and commit a check run belongs to. */
export interface CheckTarget {
  owner: string;
  repo: string;
  headSha: string;
  /** The check run's name (default CHECK_NAME). */
  name?: string;
}

// `cancelled` is for an interrupted run: GitHub counts neutral as passing, and a run cut short proved nothing.
export type Conclusion = 'success' | 'neutral' | 'failure' | 'cancelled';

/** What a completed check run shows. */
export interface CheckOutcome {
  conclusion: Conclusion;
  title: string;
  summary: string;
  annotations: CheckAnnotation[];
}

const CLASS_WORDS: [keyof Report['counts'], string, string][] = [
  ['new-critical-failure', 'new critical failure', 'new critical failures'],
  ['regressed', 'regressed', 'regressed'],
  ['incomplete', 'incomplete', 'incomplete'],
  ['improved', 'improved', 'improved'],
  ['unchanged', 'unchanged', 'unchanged'],
];

/**
 * The check run's title: the verdict and the count of each class present, e.g. `BLOCK: 1 new
 * critical failure, 4 unchanged`; for the head alone, `BLOCK: 3 fail, 7 pass (head only, no base)`.
 */
export function checkTitle(report: Report): string {
  // The head alone has nothing to be unchanged against: its cases pass or fail.
  const labels = headOnly(report) ? report.cases.map((c) => caseLabel(report, c)) : [];
  const parts = headOnly(report)
    ? ['fail', 'incomplete', 'pass']
        .map((label) => [label, labels.filter((l) => l === label).length] as const)
        .filter(([, n]) => n > 0)
        .map(([label, n]) => `${n} ${label}`)
    : CLASS_WORDS.filter(([k]) => (report.counts[k] ?? 0) > 0).map(
        ([k, one, many]) => `${report.counts[k]} ${report.counts[k] === 1 ? one : many}`,
      );
  if (weakenings(report.suite_changes).length > 0) parts.unshift('suite weakened');
  const alone = headOnly(report) ? ' (head only, no base)' : '';
  return `${verdictWords(report)}: ${parts.length > 0 ? parts.join(', ') : 'no scenarios'}${alone}`;
}

/**
 * The check run's conclusion: PASS success, WARN neutral, BLOCK failure; a report from a run the base
 * repository does not control is neutral at best, never success; an interrupted run (SIGINT or SIGTERM,
 * as when the job is cancelled or times out) is cancelled, whatever it had graded.
 */
export function checkConclusionOf(
  report: Pick<Report, 'verdict' | 'unverified' | 'interrupted'>,
): Conclusion {
  if (report.interrupted) return 'cancelled';
  const conclusion = checkConclusion(report.verdict);
  return report.unverified && conclusion === 'success' ? 'neutral' : conclusion;
}

/** The check run's summary as posted: the markdown trimmed under GitHub's limit, with a note when cut. */
export function checkRunSummary(markdown: string): string {
  return trimMarkdown(
    markdown,
    GITHUB_TEXT_LIMIT,
    '_The summary was trimmed to fit the check run; the full report is in the job summary and report.json._',
  );
}

/** Creates the check run in_progress on the head commit; returns its id. */
export async function startCheckRun(gh: GitHub, target: CheckTarget, detailsUrl?: string): Promise<number> {
  const { data } = await gh.rest.checks.create({
    owner: target.owner,
    repo: target.repo,
    name: target.name ?? CHECK_NAME,
    head_sha: target.headSha,
    status: 'in_progress',
    started_at: new Date().toISOString(),
    ...(detailsUrl ? { details_url: detailsUrl } : {}),
  });
  return data.id;
}

/**
 * Completes the check run (creating it completed when `id` is null) with the conclusion, title and
 * trimmed summary and the first 50 annotations, then appends the rest 50 per update.
 */
export async function completeCheckRun(
  gh: GitHub,
  target: CheckTarget,
  id: number | null,
  outcome: CheckOutcome,
): Promise<{ id: number; url: string | null }> {
  const summary = checkRunSummary(outcome.summary);
  const batches: CheckAnnotation[][] = [];
  for (let i = 0; i < outcome.annotations.length; i += ANNOTATIONS_PER_REQUEST) {
    batches.push(outcome.annotations.slice(i, i + ANNOTATIONS_PER_REQUEST));
  }
  const output = (annotations: CheckAnnotation[] | undefined) => ({
    title: outcome.title,
    summary,
    ...(annotations && annotations.length > 0 ? { annotations } : {}),
  });
  const completed = {
    owner: target.owner,
    repo: target.repo,
    status: 'completed' as const,
    conclusion: outcome.conclusion,
    completed_at: new Date().toISOString(),
    output: output(batches[0]),
  };
  const { data } =
    id === null
      ? await gh.rest.checks.create({
          ...completed,
          name: target.name ?? CHECK_NAME,
          head_sha: target.headSha,
        })
      : await gh.rest.checks.update({ ...completed, check_run_id: id });
  // Each update appends its annotations to the ones the run already has.
  for (const batch of batches.slice(1)) {
    await gh.rest.checks.update({
      owner: target.owner,
      repo: target.repo,
      check_run_id: data.id,
      output: output(batch),
    });
  }
  return { id: data.id, url: data.html_url ?? null };
}
