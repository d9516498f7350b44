// Calibrating the judge against human labels, and reading which criteria a calibration allows to
// block. A calibration is per criterion and per judge model: one made with another model does not count.
import type {
  AgreementTable,
  CriterionCalibration,
  JudgeCalibrationFile,
  JudgeLabel,
} from '../config/schema.js';
import type { Suite } from '../config/suite.js';
import { gradeJudge } from '../expectations/kinds/judge.js';
import type { JudgeCalibrationFacts } from '../model/report.js';
import { calibrationOf, emptyTable, tally } from './agreement.js';
import { askJudge, type JudgeClientOptions, toJudgeResult } from './client.js';

/** One criterion's labels asked of the judge: the table, and the errors left out of it. */
export interface CriterionRun {
  criterion: string;
  labels: number;
  judgeErrors: number;
  /** The first few judge errors, to say why. */
  errorExamples: string[];
  table: AgreementTable;
}

export interface CalibrateProgress {
  done: number;
  total: number;
  criterion: string;
  /** The judge's verdict ('pass' | 'fail') or its error. */
  outcome: { judgePass: boolean; humanPass: boolean } | { error: string };
}

const ERROR_EXAMPLES = 3;

/**
 * Asks the judge about every labelled reply. The judge's verdict is gradeJudge's on the label's
 * criterion and threshold, exactly as in a run. A judge error is counted per criterion and left out
 * of the table: neither a disagreement nor a pass.
 */
export async function runCalibration(
  labels: readonly JudgeLabel[],
  options: JudgeClientOptions,
  onProgress: (p: CalibrateProgress) => void = () => undefined,
): Promise<CriterionRun[]> {
  const runs = new Map<string, CriterionRun>();
  let done = 0;
  for (const item of labels) {
    let run = runs.get(item.criterion);
    if (!run) {
      run = { criterion: item.criterion, labels: 0, judgeErrors: 0, errorExamples: [], table: emptyTable() };
      runs.set(item.criterion, run);
    }
    run.labels++;
    const outcome = await askJudge(options, {
      criterion: item.criterion,
      message: item.message,
      reply: item.reply,
    });
    done++;
    if ('error' in outcome) {
      run.judgeErrors++;
      if (run.errorExamples.length < ERROR_EXAMPLES) run.errorExamples.push(outcome.error);
      onProgress({ done, total: labels.length, criterion: item.criterion, outcome });
      continue;
    }
    const { criterion, threshold } = item;
    const judgePass = gradeJudge({ criterion, threshold }, toJudgeResult(outcome)).verdict === 'pass';
    const humanPass = item.label === 'pass';
    tally(run.table, judgePass, humanPass);
    onProgress({ done, total: labels.length, criterion: item.criterion, outcome: { judgePass, humanPass } });
  }
  return [...runs.values()];
}

/** The calibration file's entry for one criterion run with one model. */
export function criterionCalibration(run: CriterionRun, model: string): CriterionCalibration {
  const verdict = calibrationOf(run.table);
  return {
    criterion: run.criterion,
    model,
    labels: run.labels,
    judge_errors: run.judgeErrors,
    n: verdict.n,
    agreement: verdict.agreement,
    kappa: verdict.kappa,
    table: run.table,
    calibrated: verdict.calibrated,
    why_not: verdict.whyNot,
  };
}

/**
 * The calibration file after a calibration: entries of the same criterion and model are replaced,
 * every other entry (other criteria, other models) is kept; sorted so the file diffs cleanly.
 */
export function mergeCalibration(
  previous: readonly CriterionCalibration[],
  fresh: readonly CriterionCalibration[],
): JudgeCalibrationFile {
  const key = (c: CriterionCalibration) => JSON.stringify([c.criterion, c.model]);
  const replaced = new Set(fresh.map(key));
  const criteria = [...previous.filter((c) => !replaced.has(key(c))), ...fresh];
  criteria.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return { version: 1, criteria };
}

/**
 * The criteria whose verdicts may block with this judge model. The rule is applied to the stored
 * table, not taken from the stored `calibrated` flag, so an edited flag changes nothing.
 */
export function calibratedCriteria(
  criteria: readonly CriterionCalibration[] | null | undefined,
  model: string | undefined,
): string[] {
  if (!criteria || model === undefined) return [];
  return criteria
    .filter((c) => c.model === model && calibrationOf(c.table).calibrated)
    .map((c) => c.criterion);
}

/** What report.json says about the calibration a run used; undefined without a `judge:` section. */
export function judgeCalibrationFacts(
  suite: Pick<Suite, 'config' | 'judgeCalibration'>,
): JudgeCalibrationFacts | undefined {
  const judge = suite.config.judge;
  if (!judge) return undefined;
  const calibration = suite.judgeCalibration ?? null;
  return {
    model: judge.model,
    file: calibration?.file ?? null,
    sha256: calibration?.sha256 ?? null,
    calibrated: calibratedCriteria(calibration?.criteria, judge.model),
  };
}
