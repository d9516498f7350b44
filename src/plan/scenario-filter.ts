// `--scenario ID` (repeatable, `*` and `?` globs) and `--tag TAG` (repeatable): the scenarios a
// local run grades. A scenario is kept when it matches any --scenario pattern (when there is one)
// and carries any --tag (when there is one). A pattern or a tag that selects nothing is an error
// that lists what the suite has: a typo must not quietly run less than was asked for.
import type { Scenario } from '../config/schema.js';

/** What a filtered run was asked to run; absent (null) for the whole suite. */
export interface ScenarioFilter {
  scenarios: string[];
  tags: string[];
}

/** A filter that selects nothing; the message names what exists. */
export class FilterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FilterError';
  }
}

/** `*` is any run of characters, `?` one character; everything else is itself. */
export function globPattern(glob: string): RegExp {
  const body = [...glob]
    .map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`, 's');
}

/** "a, b, c" with at most `most` shown. */
function listOf(words: readonly string[], most = 20): string {
  const shown = words.slice(0, most).join(', ');
  return words.length > most ? `${shown} and ${words.length - most} more` : shown;
}

/** The scenarios the filter keeps, in the suite's order; the whole list without a filter. */
export function filterScenarios(all: Scenario[], filter: ScenarioFilter | null | undefined): Scenario[] {
  if (!filter || (filter.scenarios.length === 0 && filter.tags.length === 0)) return all;
  const patterns = filter.scenarios.map((p) => ({ text: p, re: globPattern(p) }));
  for (const p of patterns) {
    if (!all.some((s) => p.re.test(s.id))) {
      throw new FilterError(
        `--scenario ${p.text} matches no scenario; the suite's scenarios are ${listOf(all.map((s) => s.id))}`,
      );
    }
  }
  const tagsInSuite = [...new Set(all.flatMap((s) => s.tags))].sort();
  for (const tag of filter.tags) {
    if (!tagsInSuite.includes(tag)) {
      throw new FilterError(
        tagsInSuite.length === 0
          ? `--tag ${tag} is on no scenario; no scenario of the suite has tags`
          : `--tag ${tag} is on no scenario; the suite's tags are ${listOf(tagsInSuite)}`,
      );
    }
  }
  const kept = all.filter(
    (s) =>
      (patterns.length === 0 || patterns.some((p) => p.re.test(s.id))) &&
      (filter.tags.length === 0 || filter.tags.some((t) => s.tags.includes(t))),
  );
  if (kept.length === 0) {
    throw new FilterError(
      `no scenario matches ${filter.scenarios.map((p) => `--scenario ${p}`).join(' or ')} and carries ${filter.tags.map((t) => `--tag ${t}`).join(' or ')}`,
    );
  }
  return kept;
}

/** The filter as its options were written, e.g. `--scenario refund-* --tag fault`. */
export function filterWords(filter: ScenarioFilter): string {
  return [...filter.scenarios.map((p) => `--scenario ${p}`), ...filter.tags.map((t) => `--tag ${t}`)].join(
    ' ',
  );
}
