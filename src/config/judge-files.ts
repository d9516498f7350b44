// The judge's own files: human labels (`stategate judge calibrate LABELS.yaml`), the calibration
// file it writes (read back by every run), and the `judge:` section of stategate.yml on its own.
// Each loader returns every problem with file:line:col, like the suite loader.
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { z } from 'zod';
import { expandEnv } from './env-expand.js';
import { notAMapping } from './scenario-file.js';
import {
  type CriterionCalibration,
  JudgeCalibrationFile,
  JudgeConfig,
  type JudgeLabel,
  LabelsFile,
  type StategateConfig,
} from './schema.js';
import { displayPath, readTextFile, suitePath } from './source-file.js';
import type { Problem } from './suite.js';
import { namedFileProblem, suiteDir } from './suite-paths.js';
import { parseYaml, problemAt, type YamlSource } from './yaml-source.js';
import { validate } from './zod-problems.js';

/** The calibration file's name when `judge.calibration` does not give one. */
export const DEFAULT_CALIBRATION_FILE = 'judge-calibration.json';

/** A calibration file as a run reads it. */
export interface JudgeCalibration {
  /** The file, relative to the suite root. */
  file: string;
  /** sha256 of the file's bytes, so a report can say which calibration it used. */
  sha256: string;
  criteria: CriterionCalibration[];
}

export type Loaded<T> = { ok: true; value: T } | { ok: false; problems: Problem[] };

/** A file whose top level is a mapping, validated by `schema`; data null when missing and `missingOk`. */
type Mapped<T> =
  | { ok: true; data: T; text: string; source: YamlSource }
  | { ok: true; data: null }
  | { ok: false; problems: Problem[] };

async function loadMapping<S extends z.ZodType>(
  absPath: string,
  schema: S,
  expected: string,
  missingOk = false,
): Promise<Mapped<z.infer<S>>> {
  const file = displayPath(absPath);
  const read = await readTextFile(absPath, file);
  if (!read.ok)
    return read.missing && missingOk ? { ok: true, data: null } : { ok: false, problems: [read.problem] };
  // A JSON file is YAML too: the YAML parser keeps positions for the problems.
  const parsed = parseYaml(file, read.text);
  if (parsed.problems.length > 0 || parsed.value === undefined)
    return { ok: false, problems: parsed.problems };
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, problems: [notAMapping(parsed.source, value, expected)] };
  }
  const result = validate(schema, value, parsed.source);
  if (!result.ok) return result;
  return { ok: true, data: result.data, text: read.text, source: parsed.source };
}

/** Loads a labels file: every label, or every problem at once. */
export async function loadLabels(labelsPath: string): Promise<Loaded<JudgeLabel[]>> {
  const loaded = await loadMapping(
    path.resolve(labelsPath),
    LabelsFile,
    'labels: [{criterion, message, reply, label}]',
  );
  if (!loaded.ok) return loaded;
  return { ok: true, value: loaded.data?.labels ?? [] };
}

/** Where a suite's calibration file is: `judge.calibration`, else the default beside stategate.yml. */
export function calibrationPath(root: string, judge: NonNullable<StategateConfig['judge']>): string {
  return path.resolve(root, judge.calibration ?? DEFAULT_CALIBRATION_FILE);
}

/**
 * Reads a calibration file. A missing file is no calibration (null: every criterion uncalibrated);
 * a malformed one is problems, since a run must not guess which verdicts may block.
 */
export async function loadJudgeCalibration(
  absPath: string,
  root: string,
): Promise<Loaded<JudgeCalibration | null>> {
  const loaded = await loadMapping(
    absPath,
    JudgeCalibrationFile,
    '"version": 1 and "criteria" (written by stategate judge calibrate)',
    true,
  );
  if (!loaded.ok) return loaded;
  if (loaded.data === null) return { ok: true, value: null };
  const { data, text, source } = loaded;
  const problems: Problem[] = [];
  const seen = new Set<string>();
  data.criteria.forEach((c, i) => {
    const key = JSON.stringify([c.criterion, c.model]);
    if (seen.has(key)) {
      const message = `criterion ${JSON.stringify(c.criterion)} with model ${JSON.stringify(c.model)} is given twice`;
      problems.push(problemAt(source, ['criteria', i], message));
    }
    seen.add(key);
  });
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    value: {
      file: suitePath(root, absPath),
      sha256: createHash('sha256').update(text).digest('hex'),
      criteria: data.criteria,
    },
  };
}

export type JudgeSection = NonNullable<StategateConfig['judge']>;

/**
 * The `judge:` section of stategate.yml, validated alone (calibrating reads no scenario, twin or
 * database setting, so problems elsewhere in the file do not stop it), and the suite root.
 */
export async function loadJudgeSection(
  configPath: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Loaded<{ judge: JudgeSection; configFile: string; root: string }>> {
  const abs = path.resolve(configPath);
  const file = displayPath(abs);
  const read = await readTextFile(abs, file);
  if (!read.ok) return { ok: false, problems: [read.problem] };
  const parsed = parseYaml(file, read.text, (source) =>
    expandEnv(source, env).filter((p) => p.path === 'judge' || p.path?.startsWith('judge.')),
  );
  if (parsed.value === undefined) return { ok: false, problems: parsed.problems };
  const raw = parsed.value as { judge?: unknown } | null;
  if (typeof raw !== 'object' || raw === null || raw.judge === undefined) {
    const where = problemAt(parsed.source, [], 'no judge: section (url, model): see docs/judge.md');
    return { ok: false, problems: [...parsed.problems, where] };
  }
  const result = validate(JudgeConfig, raw.judge, parsed.source, ['judge']);
  const problems = [...parsed.problems, ...(result.ok ? [] : result.problems)];
  if (!result.ok || problems.length > 0) return { ok: false, problems };
  // The calibration file is read and written here: never outside the suite directory.
  const root = path.dirname(abs);
  const named = result.data.calibration
    ? { name: result.data.calibration, field: ['judge', 'calibration'] }
    : { name: DEFAULT_CALIBRATION_FILE, field: ['judge'] };
  const outside = await namedFileProblem(parsed.source, named, await suiteDir(root));
  if (outside) return { ok: false, problems: [outside] };
  return { ok: true, value: { judge: result.data, configFile: abs, root } };
}
