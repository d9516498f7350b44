// Expectations are validated by their kind key (docs/formats/scenario.md): the member schema is picked by
// the one kind key an expectation carries, so a problem is about that kind's fields instead of a list
// of every way the union could have matched.
import { COMPARATOR_NAMES, EXPECTATION_KINDS, EXPECTATION_SCHEMAS, type Expectation } from './schema.js';
import { closest, describeValue } from './suggest.js';
import type { Problem } from './suite.js';
import { type FieldPath, problemAt, type YamlSource } from './yaml-source.js';
import { validate } from './zod-problems.js';

const KINDS = new Set<string>(EXPECTATION_KINDS);
const COMMON_KEYS = new Set<string>(['id', 'critical', 'loose', ...COMPARATOR_NAMES]);

/**
 * Validates a scenario's `expect` list: each expectation, or null where it has problems (aligned with
 * the list, so later checks can still point at index i), and every problem.
 */
export function parseExpectations(
  items: unknown[],
  source: YamlSource,
  prefix: FieldPath = ['expect'],
): { expect: (Expectation | null)[]; problems: Problem[] } {
  const expect: (Expectation | null)[] = items.map(() => null);
  const problems: Problem[] = [];
  items.forEach((item, i) => {
    const at = [...prefix, i];
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      problems.push(
        problemAt(source, at, `expected a mapping with an id and one kind key, got ${describeValue(item)}`),
      );
      return;
    }
    const keys = Object.keys(item);
    const kinds = keys.filter((k) => KINDS.has(k));
    if (kinds.length === 0) {
      problems.push(...missingKind(keys, source, at));
      return;
    }
    if (kinds.length > 1) {
      problems.push(
        problemAt(
          source,
          [...at, kinds[1]],
          `an expectation has exactly one kind key; this one has ${kinds.map((k) => `'${k}'`).join(' and ')} (split it into one expectation per kind)`,
          { key: true },
        ),
      );
      return;
    }
    const result = validate(
      EXPECTATION_SCHEMAS[kinds[0] as keyof typeof EXPECTATION_SCHEMAS],
      item,
      source,
      at,
    );
    if (result.ok) expect[i] = result.data as Expectation;
    else problems.push(...result.problems);
  });
  return { expect, problems };
}

function missingKind(keys: string[], source: YamlSource, at: FieldPath): Problem[] {
  const list = EXPECTATION_KINDS.join(', ');
  // A misspelt kind key is the likely cause: point at it.
  const misspelt = keys
    .filter((k) => !COMMON_KEYS.has(k))
    .map((k) => ({ key: k, kind: closest(k, EXPECTATION_KINDS) }))
    .filter((m) => m.kind !== undefined);
  if (misspelt.length > 0) {
    return misspelt.map((m) =>
      problemAt(
        source,
        [...at, m.key],
        `unknown key '${m.key}'; did you mean '${m.kind}'? An expectation needs one kind key: ${list}`,
        { key: true },
      ),
    );
  }
  return [
    problemAt(source, at, `an expectation needs exactly one kind key, one of: ${list}; this one has none`),
  ];
}
