// `stategate judge calibrate LABELS.yaml`: asks the configured judge about every human-labelled
// reply, prints agreement and Cohen's kappa per criterion, and writes the calibration file runs read.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  calibrationPath,
  type Loaded,
  loadJudgeCalibration,
  loadJudgeSection,
  loadLabels,
} from '../config/judge-files.js';
import type { CriterionCalibration } from '../config/schema.js';
import { displayPath } from '../config/source-file.js';
import { MIN_AGREEMENT, MIN_CALIBRATION_LABELS, MIN_KAPPA } from '../judge/agreement.js';
import {
  type CalibrateProgress,
  criterionCalibration,
  mergeCalibration,
  runCalibration,
} from '../judge/calibration.js';
import { judgeClientOptions } from '../judge/episode.js';
import { fail, printProblems } from './commands.js';
import type { CliValues } from './main.js';

/** The loaded value, or 1 after printing its problems as every command does. */
function problemsOf<T>(loaded: Loaded<T>): number | T {
  if (loaded.ok) return loaded.value;
  printProblems(loaded.problems);
  return 1;
}

function progressLine(p: CalibrateProgress): string {
  const what =
    'error' in p.outcome
      ? `judge error: ${p.outcome.error}`
      : `judge ${p.outcome.judgePass ? 'pass' : 'fail'}, human ${p.outcome.humanPass ? 'pass' : 'fail'}`;
  return `[${p.done}/${p.total}] ${what} (${JSON.stringify(p.criterion).slice(0, 60)})\n`;
}

const number = (x: number | null) => (x === null ? '—' : x.toFixed(3));

/** One criterion's calibration as the terminal shows it. */
export function renderCriterion(c: CriterionCalibration, errors: readonly string[] = []): string {
  const t = c.table;
  const cell = (n: number) => String(n).padStart(10);
  const lines = [
    `Criterion ${JSON.stringify(c.criterion)} (model ${c.model})`,
    `  labels ${c.labels}, judge errors ${c.judge_errors} (left out), n ${c.n}`,
    `  agreement ${number(c.agreement)}, kappa ${number(c.kappa)}`,
    `                human pass  human fail`,
    `    judge pass  ${cell(t.both_pass)}  ${cell(t.judge_pass_human_fail)}`,
    `    judge fail  ${cell(t.judge_fail_human_pass)}  ${cell(t.both_fail)}`,
  ];
  if (errors.length > 0) {
    const more = c.judge_errors > errors.length ? ` (and ${c.judge_errors - errors.length} more)` : '';
    lines.push(`  judge errors: ${errors.join('; ')}${more}`);
  }
  lines.push(c.calibrated ? '  calibrated: yes' : `  calibrated: no (${c.why_not.join('; ')})`);
  return `${lines.join('\n')}\n`;
}

/** `stategate judge SUBCOMMAND ...`; only `calibrate` exists. */
export async function commandJudge(values: CliValues, args: string[]): Promise<number> {
  const [sub, labelsPath, ...extra] = args;
  if (sub !== 'calibrate') {
    return fail(
      sub === undefined
        ? 'judge needs a subcommand: stategate judge calibrate LABELS.yaml'
        : `unknown judge subcommand '${sub}' (expected calibrate)`,
    );
  }
  if (!labelsPath) return fail('judge calibrate needs a labels file: stategate judge calibrate LABELS.yaml');
  if (extra.length > 0) return fail(`judge calibrate takes one labels file, got also ${extra.join(' ')}`);
  try {
    return await calibrate(values, labelsPath);
  } catch (err) {
    return fail((err as Error).message);
  }
}

async function calibrate(values: CliValues, labelsPath: string): Promise<number> {
  const section = problemsOf(await loadJudgeSection(resolve(values.config ?? 'stategate.yml')));
  if (typeof section === 'number') return section;
  const labels = problemsOf(await loadLabels(labelsPath));
  if (typeof labels === 'number') return labels;
  const out = values.out ? resolve(values.out) : calibrationPath(section.root, section.judge);
  // Read before asking: a broken calibration file stops the command before any judge call is paid for.
  const previous = problemsOf(await loadJudgeCalibration(out, dirname(out)));
  if (typeof previous === 'number') return previous;

  const options = judgeClientOptions(section.judge, process.env);
  process.stderr.write(`Asking ${options.model} about ${labels.length} labelled replies\n`);
  const runs = await runCalibration(labels, options, (p) => process.stderr.write(progressLine(p)));
  const fresh = runs.map((r) => criterionCalibration(r, options.model));
  for (const [i, c] of fresh.entries())
    process.stdout.write(`${renderCriterion(c, runs[i].errorExamples)}\n`);

  if (fresh.every((c) => c.n === 0)) {
    // Nothing was measured: writing would only replace an earlier calibration with empty tables.
    return fail(
      `the judge gave no verdict on any label (${runs[0]?.errorExamples[0] ?? 'no labels'}); nothing written`,
    );
  }
  const file = mergeCalibration(previous?.criteria ?? [], fresh);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(file, null, 2)}\n`);
  const calibrated = fresh.filter((c) => c.calibrated).length;
  process.stdout.write(
    `Wrote ${displayPath(out)}: ${calibrated} of ${fresh.length} criteria calibrated for ${options.model} ` +
      `(rule: n >= ${MIN_CALIBRATION_LABELS}, agreement >= ${MIN_AGREEMENT}, kappa >= ${MIN_KAPPA}).\n`,
  );
  // Like the gate: 2 when some criterion's failures will only warn.
  return calibrated === fresh.length ? 0 : 2;
}
