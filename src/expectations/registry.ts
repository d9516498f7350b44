// The expectation kinds, one line each: a kind is its module in kinds/ and its line here. The order is
// the contract's (docs/formats/scenario.md): the JSON Schema and the loader's messages list kinds in it.
// Everything a stage needs to know about a kind is answered here from its declaration.
import type { z } from 'zod';
import type { EpisodeRecord } from '../model/episode.js';
import type { ExpectationSql, FieldAt, GradeContext, Kind, KindProblem, StateRead } from './kind.js';
import { changes } from './kinds/changes.js';
import { endedBy } from './kinds/ended-by.js';
import { forbidChanges } from './kinds/forbid-changes.js';
import { judge } from './kinds/judge.js';
import { maxRetries } from './kinds/max-retries.js';
import { maxToolCalls } from './kinds/max-tool-calls.js';
import { noDuplicateEffect } from './kinds/no-duplicate-effect.js';
import { onlyChanges } from './kinds/only-changes.js';
import { order } from './kinds/order.js';
import { outcome } from './kinds/outcome.js';
import { outcomeVerified } from './kinds/outcome-verified.js';
import { query } from './kinds/query.js';
import { replyContains, replyMatches, replyNotContains } from './kinds/reply.js';
import { toolCalled } from './kinds/tool-called.js';
import { toolNotCalled } from './kinds/tool-not-called.js';
import { turns } from './kinds/turns.js';
import type { Grade } from './verdicts.js';

const KIND_LIST = [
  query,
  changes,
  onlyChanges,
  forbidChanges,
  toolCalled,
  toolNotCalled,
  noDuplicateEffect,
  order,
  maxToolCalls,
  maxRetries,
  outcome,
  outcomeVerified,
  replyContains,
  replyNotContains,
  replyMatches,
  judge,
  turns,
  endedBy,
] as const;

type Declared = (typeof KIND_LIST)[number];
export type ExpectationKind = Declared['key'];
type Declaration<K extends ExpectationKind> = Extract<Declared, { key: K }>;

/** An expectation of kind K, defaults filled in. */
export type ExpectationOf<K extends ExpectationKind> = z.infer<Declaration<K>['schema']>;
/** An expectation, discriminated by which kind key it carries. */
export type Expectation = { [K in ExpectationKind]: ExpectationOf<K> }[ExpectationKind];

/** Every kind key, in contract order. */
export const EXPECTATION_KINDS: readonly ExpectationKind[] = KIND_LIST.map((k) => k.key);

/** The schema of each kind's expectations, by kind key. */
export const EXPECTATION_SCHEMAS = Object.fromEntries(KIND_LIST.map((k) => [k.key, k.schema])) as {
  [K in ExpectationKind]: Declaration<K>['schema'];
};

const BY_KEY: ReadonlyMap<string, Kind> = new Map(KIND_LIST.map((k) => [k.key, k as unknown as Kind]));

/** The declaration of a kind by its key; undefined for a key that is no kind (such as `completed`). */
export function kindNamed(key: string): Kind | undefined {
  return BY_KEY.get(key);
}

/** Returns the kind key an expectation carries. */
export function expectationKind(e: Expectation): ExpectationKind {
  for (const k of EXPECTATION_KINDS) if (k in e) return k;
  throw new Error(`expectation ${(e as { id?: string }).id ?? '?'} has no kind`);
}

/** The declaration of the kind an expectation carries. */
export function kindOf(e: Expectation): Kind {
  return BY_KEY.get(expectationKind(e))!;
}

// A declaration takes the expectations of its own kind; kindOf picked it by the key the expectation carries.
type AnyExpectation = Parameters<Kind['grade']>[0];

/** The SQL an expectation runs read-only on the final state, if any: the one answer every stage uses. */
export function expectationSql(e: Expectation): ExpectationSql | undefined {
  return kindOf(e).sql?.(e as AnyExpectation);
}

/** What of the final state an expectation reads: what its kind says, else the text of its SQL. */
export function stateRead(e: Expectation): StateRead | undefined {
  const kind = kindOf(e);
  const read = kind.reads?.(e as AnyExpectation);
  if (read) return read;
  const sql = kind.sql?.(e as AnyExpectation);
  return sql ? { text: sql.sql } : undefined;
}

/** Grades one expectation on one episode by its kind's declaration. */
export function gradeExpectation(e: Expectation, record: EpisodeRecord, ctx: GradeContext): Grade {
  return kindOf(e).grade(e as AnyExpectation, record, ctx);
}

/** The problems an expectation's kind finds beyond its schema, each at a path inside the expectation. */
export function expectationProblems(e: Expectation): KindProblem[] {
  return kindOf(e).check?.(e as AnyExpectation) ?? [];
}

/**
 * The tool names an expectation as written names, each with where: read from the raw mapping (every
 * kind key it carries), so a misspelt tool is reported beside whatever else is wrong with it.
 */
export function namedTools(raw: Readonly<Record<string, unknown>>): { name: unknown; at: FieldAt }[] {
  const out: { name: unknown; at: FieldAt }[] = [];
  const walk = (value: unknown, path: FieldAt, rest: FieldAt): void => {
    if (rest.length === 0) return void out.push({ name: value, at: path });
    const [step, ...more] = rest;
    if (step === '*') {
      if (Array.isArray(value)) {
        for (const [i, item] of value.entries()) walk(item, [...path, i], more);
      }
    } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      walk((value as Record<string, unknown>)[step], [...path, step], more);
    }
  };
  for (const [key, kind] of BY_KEY) {
    if (!(key in raw)) continue;
    for (const at of kind.tools ?? []) walk(raw, [], at);
  }
  return out;
}
