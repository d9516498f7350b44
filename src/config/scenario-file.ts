// One scenario file (docs/formats/scenario.md): schema validation plus the checks that need only this
// file. Checks across files (tool names, duplicate ids) live in suite-checks.ts.

import { z } from 'zod';
import { compileAsked, isPatternEntry } from '../expectations/asked.js';
import { expectationProblems } from '../expectations/registry.js';
import { COMPLETED } from '../model/episode.js';
import { parseExpectations } from './expectations.js';
import { type Expectation, FaultRule, ModelFaultRule, type Scenario, ScenarioFile } from './schema.js';
import { describeValue } from './suggest.js';
import type { Problem } from './suite.js';
import { type FieldPath, locate, problemAt, type YamlSource } from './yaml-source.js';
import { validate } from './zod-problems.js';

// The expectations are validated one by one, by kind, and the faults one by one (a tool's or a
// model's, by the key they carry); the rest of the file by the schema.
const ScenarioShape = ScenarioFile.extend({
  expect: z.array(z.unknown()).default([]),
  faults: z.array(z.unknown()).default([]),
});

/** Each fault rule against the schema its key names (`model:` a model provider's, else a tool's). */
function parseFaults(
  items: unknown[],
  source: YamlSource,
): { faults: Scenario['faults']; problems: Problem[] } {
  const faults: Scenario['faults'] = [];
  const problems: Problem[] = [];
  items.forEach((item, i) => {
    const isModel = item !== null && typeof item === 'object' && 'model' in item && !('tool' in item);
    const result = validate(isModel ? ModelFaultRule : FaultRule, item, source, ['faults', i]);
    if (result.ok) faults.push(result.data);
    else problems.push(...result.problems);
  });
  return { faults, problems };
}

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
  const rawFaults = (value as { faults?: unknown }).faults;
  const faults = Array.isArray(rawFaults) ? parseFaults(rawFaults, source) : { faults: [], problems: [] };
  problems.push(...faults.problems);
  if (shape.ok && faults.problems.length === 0) problems.push(...faultWhenChecks(faults.faults, source));
  if (shape.ok) problems.push(...userChecks(shape.data.user, parsed.expect, source));
  if (!shape.ok || problems.length > 0) return { problems };

  const expect = parsed.expect as Expectation[];
  const expectations: Record<string, number> = {};
  expect.forEach((e, i) => {
    expectations[e.id] = locate(source, ['expect', i, 'id'], { key: true }).line;
  });
  const lines = { scenario: locate(source, ['id'], { key: true }).line, expectations };
  return { scenario: { ...shape.data, faults: faults.faults, expect, file, lines }, problems };
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

/** The checks each kind declares beyond its schema (comparators present, regexes that compile, min <= max). */
function expectationChecks(expect: (Expectation | null)[], source: YamlSource): Problem[] {
  return expect.flatMap((e, i) =>
    e ? expectationProblems(e).map((p) => problemAt(source, ['expect', i, ...p.at], p.message)) : [],
  );
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

/**
 * The user block and what names it: every `asked` entry compiles (RE2), a scripted user's facts say
 * how they are asked for, a model-played user has instructions, and every `must_learn` names a fact.
 */
function userChecks(user: Scenario['user'], expect: (Expectation | null)[], source: YamlSource): Problem[] {
  const problems: Problem[] = [];
  for (const [name, fact] of Object.entries(user?.facts ?? {})) {
    if (!user?.model && fact.asked === undefined) {
      problems.push(
        problemAt(
          source,
          ['user', 'facts', name],
          `fact '${name}' needs 'asked': the phrases that ask for it (the scripted user gives a fact only when asked)`,
        ),
      );
    }
    (fact.asked ?? []).forEach((entry, i) => {
      const compiled = compileAsked(entry);
      if ('error' in compiled) {
        const what = isPatternEntry(entry)
          ? compiled.error
          : `a phrase that could not be compiled: ${compiled.error}`;
        problems.push(problemAt(source, ['user', 'facts', name, 'asked', i], what));
      }
    });
  }
  if (user?.model && user.instructions === undefined) {
    problems.push(
      problemAt(
        source,
        ['user'],
        "a model-played user (model: true) needs 'instructions': who the user is and what they want",
      ),
    );
  }
  const known = Object.keys(user?.facts ?? {});
  expect.forEach((e, i) => {
    if (!e || !('order' in e)) return;
    (e.order.must_learn ?? []).forEach((fact, j) => {
      if (known.includes(fact)) return;
      const at: FieldPath = ['expect', i, 'order', 'must_learn', j];
      const message = !user
        ? `must_learn names fact '${fact}', but the scenario has no user: add a user block with facts`
        : `must_learn names fact '${fact}', which user.facts does not have; expected one of: ${known.join(', ') || '(no facts)'}`;
      problems.push(problemAt(source, at, message));
    });
  });
  return problems;
}
