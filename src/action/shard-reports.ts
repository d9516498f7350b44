// The merge job's input: the shard reports a glob names, read and checked to be report.json files.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { glob } from 'tinyglobby';
import type { Report } from '../report/types.js';

/** Thrown when the glob matches nothing or a match is not a report. */
export class ShardReportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShardReportError';
  }
}

/** Reads every report the glob matches under `cwd`, sorted by path, skipping `exclude` (the merge's own output). */
export async function readShardReports(
  pattern: string,
  cwd: string,
  exclude: string,
): Promise<{ file: string; report: Report }[]> {
  const files = (await glob(pattern, { cwd, absolute: true, dot: true, onlyFiles: true }))
    .map((f) => resolve(f))
    .filter((f) => f !== resolve(exclude))
    .sort();
  if (files.length === 0) throw new ShardReportError(`merge: no files match "${pattern}" under ${cwd}`);
  return files.map((file) => {
    let value: unknown;
    try {
      value = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new ShardReportError(`merge: ${file} is not readable JSON: ${(err as Error).message}`);
    }
    const r = value as Partial<Report> | null;
    if (r?.version !== 1 || !Array.isArray(r.cases) || typeof r.verdict !== 'string' || !r.pin) {
      throw new ShardReportError(
        `merge: ${file} is not a stategate report.json (version 1 with verdict, pin and cases)`,
      );
    }
    return { file, report: r as Report };
  });
}
