// One scenario file (docs/formats/scenario.md): schema validation plus the checks that need only this
// file. Checks across files (tool names, duplicate ids) live in suite-checks.ts.

import { z } from 'zod';
import { COMPLETED } from '../model/episode.js';
import { parseExpectations } from './expectations.js';
import { compileSuitePattern } from './pattern.js';
import {
  COMPARATOR_NAMES,
  type Expectation,
  type QueryCheck,
  type Scenario,
  ScenarioFile,
} from './schema.js';
import { describeValue } from './suggest.js';
import type { Problem } from './suite.js';
import { type FieldPath, locate, problemAt, type YamlSource } from './yaml-source.js';
import { validate } from './zod-problems.js';

// The expectations are validated one by one, by kind; the rest of the file by the schema.
const ScenarioShape = ScenarioFile.extend({ expect: z.array(z.unknown()).default([]) });

/** Validates a parsed scenario file; the Scenario when it has no problems. */
export function readScenario(
  value: unknown,
  source: YamlSource,
  file: string,
): { scenario?: Scenario; problems: Problem[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { problems: [notAMapping(source, value, 'a scenario: id, input.message and expect')] };
  }
  const problems: Problem[] = [];
  const shape = validate(ScenarioShape, value, source);
  if (!shape.ok) problems.push(...shape.problems);
  const rawExpect = (value as { expect?: unknown }).expect;
  const parsed = Array.isArray(rawExpect)
    ? parseExpectations(rawExpect, source)
    : { expect: [], problems: [] };
  problems.push(...parsed.problems);
  if (Array.isArray(rawExpect)) problems.push(...idChecks(rawExpect, source));
  problems.push(...expectationChecks(parsed.expect, source));
  if (shape.ok) problems.push(...faultWhenChecks(shape.data.faults, source));
  if (!shape.ok || problems.length > 0) return { problems };

  const expect = parsed.expect as Expectation[];
  const expectations: Record<string, number> = {};
  expect.forEach((e, i) => {
    expectations[e.id] = locate(source, ['expect', i, 'id'], { key: true }).line;
  });
  const lines = { scenario: locate(source, ['id'], { key: true }).line, expectations };
  return { scenario: { ...shape.data, expect, file, lines }, problems };
}

/** A problem for a file whose top level is not a mapping (empty, a scalar or a list). */
export function notAMapping(source: YamlSource, value: unknown, what: string): Problem {
  const where = locate(source, []);
  const message =
    value === null || value === undefined
      ? `the file is empty; expected a mapping with ${what}`
      : `expected a mapping with ${what}, got ${describeValue(value)}`;
  return { file: source.file, ...where, message };
}

/** Expectation ids: unique in the scenario and not the implicit one (checked on every item, valid or not). */
function idChecks(items: unknown[], source: YamlSource): Problem[] {
  const problems: Problem[] = [];
  const seen = new Map<string, number>();
  items.forEach((item, i) => {
    const id = (item as { id?: unknown } | null)?.id;
    if (typeof id !== 'string') return;
    const at: FieldPath = ['expect', i, 'id'];
    if (id === COMPLETED) {
      problems.push(
        problemAt(
          source,
          at,
          `'${COMPLETED}' is the implicit expectation every episode has; choose another id`,
        ),
      );
    }
    const first = seen.get(id);
    if (first === undefined) {
      seen.set(id, i);
      return;
    }
    const line = locate(source, ['expect', first, 'id']).line;
    problems.push(problemAt(source, at, `duplicate expectation id '${id}' (first used at line ${line})`));
  });
  return problems;
}

/** Checks values zod cannot judge: comparators present, regexes that compile, min <= max. */
function expectationChecks(expect: (Expectation | null)[], source: YamlSource): Problem[] {
  const problems: Problem[] = [];
  expect.forEach((e, i) => {
    if (!e) return;
    const at: FieldPath = ['expect', i];
    if ('query' in e) problems.push(...queryCheckProblems(e, source, at));
    if ('outcome_verified' in e && e.outcome_verified !== true) {
      problems.push(...queryCheckProblems(e.outcome_verified, source, [...at, 'outcome_verified']));
    }
    if ('reply_matches' in e)
      problems.push(...regexProblems(e.reply_matches, source, [...at, 'reply_matches']));
    if ('tool_called' in e) {
      const { min, max } = e.tool_called;
      if (max !== undefined && min > max) {
        problems.push(
          problemAt(source, [...at, 'tool_called', 'max'], `max (${max}) is less than min (${min})`),
        );
      }
    }
  });
  return problems;
}

function queryCheckProblems(check: QueryCheck, source: YamlSource, at: FieldPath): Problem[] {
  const given = COMPARATOR_NAMES.filter((c) => check[c] !== undefined);
  if (given.length === 0) {
    return [
      problemAt(
        source,
        [...at, 'query'],
        `a query needs a comparator beside it: one of ${COMPARATOR_NAMES.join(', ')}`,
      ),
    ];
  }
  return check.matches === undefined ? [] : regexProblems(check.matches, source, [...at, 'matches']);
}

function regexProblems(pattern: string, source: YamlSource, at: FieldPath): Problem[] {
  const compiled = compileSuitePattern(pattern);
  return 'error' in compiled ? [problemAt(source, at, compiled.error)] : [];
}

const WHEN_KEYS = ['call', 'calls', 'first', 'every', 'args', 'probability'] as const;

function faultWhenChecks(faults: Scenario['faults'], source: YamlSource): Problem[] {
  const problems: Problem[] = [];
  faults.forEach((rule, i) => {
    if (WHEN_KEYS.every((k) => rule.when[k] === undefined)) {
      problems.push(
        problemAt(
          source,
          ['faults', i, 'when'],
          `'when' needs one of ${WHEN_KEYS.join(', ')} (or leave it out: every call)`,
        ),
      );
    }
  });
  return problems;
}
