// The merge job's input: the shard reports a glob names, each read and validated (readReportFile).
import { relative, resolve } from 'node:path';
import { glob } from 'tinyglobby';
import type { Report } from '../model/report.js';
import { readReportFile } from '../run/read-report.js';

/** Thrown when the glob matches nothing (a malformed match throws a ReportError). */
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
  // Each report is input to check, not a verdict to believe: schema, sizes, ids, paths, counts.
  return files.map((file) => ({ file, report: readReportFile(file, relative(cwd, file) || file) }));
}
