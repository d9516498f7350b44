// Reading a report.json from outside (a shard's artifact `merge` is asked to join): size-capped,
// parsed, validated against the schema, and checked for a class its own counts contradict. What it
// says of itself is not believed: its verdict, the verdict's reasons and its totals are computed
// again from its rechecked cases (an older report.json without `gate_reasons` gets them here too).
// Every refusal names the file, the JSON path and what was expected there.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { z } from 'zod';
import { recheckReport } from '../compare/recheck.js';
import type { Report } from '../model/report.js';
import { jsonPath, REPORT_LIMITS, ReportSchema } from '../report/report-schema.js';

/** A report merge refuses; the message names the file, the JSON path and what was expected. */
export class ReportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReportError';
  }
}

/** Issues shown per refused report: past the first few, more are noise from the same mistake. */
const MAX_ISSUES = 5;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string')
    return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

function issueText(issue: z.core.$ZodIssue): { path: readonly PropertyKey[]; message: string } {
  switch (issue.code) {
    case 'invalid_type':
      return {
        path: issue.path,
        message:
          issue.input === undefined
            ? `missing required field (expected ${issue.expected})`
            : `expected ${issue.expected}, got ${describe(issue.input)}`,
      };
    case 'invalid_value':
      return {
        path: issue.path,
        message: `expected ${issue.values.map((v) => JSON.stringify(v)).join(' | ')}, got ${describe(issue.input)}`,
      };
    case 'unrecognized_keys':
      return {
        path: [...issue.path, issue.keys[0]],
        message: `unknown field${issue.keys.length > 1 ? `s ${issue.keys.map((k) => `'${k}'`).join(', ')}` : ''}: a version 1 report.json has no such field`,
      };
    case 'too_big':
      return {
        path: issue.path,
        message: `expected at most ${issue.maximum}${issue.origin === 'string' ? ' characters' : issue.origin === 'array' ? ' items' : ''}, got more`,
      };
    case 'invalid_key':
      return { path: issue.path, message: issue.issues[0]?.message ?? issue.message };
    default:
      return { path: issue.path, message: issue.message };
  }
}

/**
 * Validates a parsed report.json (`name` says which file in messages): the report with its verdict and
 * totals recomputed, or a ReportError listing where it breaks the schema or contradicts its own counts.
 */
export function validateReport(value: unknown, name: string): Report {
  const parsed = ReportSchema.safeParse(value, { reportInput: true });
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, MAX_ISSUES).map(issueText);
    const more = parsed.error.issues.length - issues.length;
    const lines = issues.map((i) => `${name}: ${jsonPath(i.path)}: ${i.message}`);
    if (more > 0) lines.push(`${name}: and ${more} more problem${more === 1 ? '' : 's'}`);
    throw new ReportError(lines.join('\n'));
  }
  const checked = recheckReport(parsed.data as Report);
  if (!checked.ok) throw new ReportError(`${name}: ${checked.problem.path}: ${checked.problem.message}`);
  return checked.report;
}

/** Reads a file of at most `limit` bytes; null when it is larger. */
function readCapped(file: string, limit: number): string | null {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size > limit) return null;
    const buffer = Buffer.alloc(size + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > size) throw new Error('it grew while being read');
    }
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Reads, parses and validates one report.json (`name`: how messages call it, e.g. its relative path). */
export function readReportFile(file: string, name = file): Report {
  let text: string | null;
  try {
    text = readCapped(file, REPORT_LIMITS.bytes);
  } catch (err) {
    throw new ReportError(`${name}: cannot read it: ${(err as Error).message}`);
  }
  if (text === null) {
    throw new ReportError(
      `${name}: larger than ${REPORT_LIMITS.bytes / (1024 * 1024)} MiB, the most a report.json may be`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ReportError(`${name}: not JSON: ${(err as Error).message}`);
  }
  return validateReport(value, name);
}
