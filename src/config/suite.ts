// The loaded suite: everything a run reads from disk, validated.

import type { TemplateSpec } from '../model/engine.js';
import type { JudgeCalibration } from './judge-files.js';
import type { Scenario, StategateConfig, Tool } from './schema.js';

/** One problem in one file, with its position: errors are values until the edge. */
export interface Problem {
  file: string;
  line: number;
  col: number;
  /** The field path, e.g. `expect[2].query`. */
  path?: string;
  message: string;
}

export interface Suite {
  /** The config file's path and the directory its relative paths resolve from. */
  configFile: string;
  root: string;
  config: StategateConfig;
  scenarios: Scenario[];
  /** Every twin tool, by name. */
  tools: Map<string, Tool>;
  template: TemplateSpec;
  /** Raw file contents by suite-relative path, for content hashing (pin). */
  files: Record<string, string>;
  /** The judge calibration file; null when there is none (every judge criterion uncalibrated). */
  judgeCalibration?: JudgeCalibration | null;
}

/** What SQL checks need of a suite: its tools and scenarios, the files they came from. */
export type SuiteSql = Pick<Suite, 'root' | 'files' | 'tools' | 'scenarios'>;

/**
 * The parts of a suite with problems that did load: the tools and scenarios of the files that
 * parsed, with a template whose files loaded and a database section that is valid, so their SQL
 * can still be prepared in the same pass (`stategate validate` reports all problems at once).
 */
export type SuiteParts = SuiteSql &
  Pick<Suite, 'configFile' | 'template'> & {
    config: Pick<StategateConfig, 'database'> & Partial<Pick<StategateConfig, 'ignore_columns'>>;
  };

/** Either the suite, or every problem found, all at once, and the parts that did load. */
export type LoadResult = { ok: true; suite: Suite } | { ok: false; problems: Problem[]; parts?: SuiteParts };

/** Formats a problem as `file:line:col: message` for terminals and annotations. */
export function formatProblem(p: Problem): string {
  return `${p.file}:${p.line}:${p.col}: ${p.path ? `${p.path}: ` : ''}${p.message}`;
}

/** Thrown at the edge when a suite does not load; carries every problem. */
export class ConfigError extends Error {
  constructor(readonly problems: Problem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.name = 'ConfigError';
  }
}
