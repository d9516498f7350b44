// What compare writes must be what merge accepts: a head that stores a huge document, or replies
// with one, must not make its own shard report unmergeable. State values are cut to the report's
// value limits and every other long string to its text limit, with a mark that says so.

import type { CaseReport, EpisodeSteps, Report, StepReport } from '../model/report.js';
import { REPORT_LIMITS } from './report-schema.js';

const CUT = '… (cut for report.json)';

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - CUT.length)}${CUT}` : text;
}

/** A state value within the depth and string limits of report.json. */
function boundValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return cut(value, REPORT_LIMITS.valueString);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= REPORT_LIMITS.valueDepth) return CUT;
  if (Array.isArray(value)) return value.map((v) => boundValue(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, boundValue(v, depth + 1)]));
}

/** Every other string of the report within the text limit (ids and paths are bounded by the config). */
function boundStrings(value: unknown): unknown {
  if (typeof value === 'string') return cut(value, REPORT_LIMITS.text);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(boundStrings);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, boundStrings(v)]));
}

/** A step's arguments are values like a state's: bounded the same way, the rest as text. */
function boundSteps(steps: EpisodeSteps | null): EpisodeSteps | null {
  if (steps === null) return null;
  return {
    ...(boundStrings({ ...steps, steps: [] }) as EpisodeSteps),
    steps: steps.steps.map((s) => ({
      ...(boundStrings({ ...s, args: null }) as StepReport),
      args: boundValue(s.args, 0),
    })),
  };
}

/** The report with its state values and long texts cut to what `merge` accepts. */
export function boundReport(report: Report): Report {
  const cases = report.cases.map((c) => {
    const bounded: CaseReport = {
      ...(boundStrings({ ...c, state_diff: [], steps: undefined }) as typeof c),
      state_diff: c.state_diff.map((d) => ({
        ...(boundStrings({ ...d, base: null, head: null }) as typeof d),
        base: boundValue(d.base, 0),
        head: boundValue(d.head, 0),
      })),
    };
    if (c.steps) bounded.steps = { base: boundSteps(c.steps.base), head: boundSteps(c.steps.head)! };
    else delete bounded.steps;
    return bounded;
  });
  return { ...(boundStrings({ ...report, cases: [] }) as Report), cases };
}
