// What one expectation kind declares, in one module of kinds/: its schema, the SQL it runs on the
// final state, what of the state it reads, how it grades, which of its parameters narrow or widen it,
// and the checks zod cannot make. Every stage that needs to know a kind asks the registry for its
// declaration instead of switching on the kind key.
import { z } from 'zod';
import type { EpisodeRecord } from '../model/episode.js';
import type { Param } from './params.js';
import type { Grade } from './verdicts.js';

/** The fields every expectation has beside its kind key. */
export const EXPECTATION_BASE = {
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'an expectation id'),
  critical: z.boolean().default(false),
};

/**
 * What a kind grades on: the final database state, the calls the tools recorded, what the agent
 * said, or the conversation the harness recorded (who ended it, after how many turns).
 */
export type Evidence = 'state' | 'calls' | 'claims' | 'conversation';

/** What the judge said about one `judge` expectation, or why it could not say. */
export type JudgeResult = { score: number; pass: boolean; reason?: string } | { error: string };

/** What grading may read beside the episode record. */
export interface GradeContext {
  /** The tools the scenario allows (`tools:`; absent: every twin tool). */
  scenario: { tools?: readonly string[] };
  /** The twin definitions by tool name, when the harness has them. */
  tools?: ReadonlyMap<string, { risk: string }>;
  /** What the judge said about this expectation, for a kind graded by the judge. */
  judge?: JudgeResult;
}

/** A path inside one expectation, such as `['outcome_verified', 'query']`. */
export type FieldAt = readonly (string | number)[];

/** The SQL an expectation runs read-only on the final state, and where in the expectation it is written. */
export interface ExpectationSql {
  sql: string;
  at: FieldAt;
}

/** What of the final state an expectation reads: the text naming tables and keys, or every table outside a list. */
export type StateRead = { text: string } | { outside: readonly string[] };

/** A problem zod cannot see (a regex that does not compile, a max below its min), inside the expectation. */
export interface KindProblem {
  at: FieldAt;
  message: string;
}

type Shape = Record<string, z.ZodType>;
type Full<S extends Shape> = z.ZodObject<typeof EXPECTATION_BASE & S, z.core.$strict>;

/** An expectation of a kind whose fields beside id and critical are S. */
export type Of<S extends Shape> = z.infer<Full<S>>;

interface Declaration<K extends string, S extends Shape> {
  /** The kind key an expectation carries. */
  key: K;
  /** The fields beside id and critical; for most kinds, the kind key alone. */
  fields: S;
  evidence: Evidence;
  /** Every field of `fields`, with what an edit of it does to the expectation. */
  params: { readonly [F in keyof S]: Param };
  /** The SQL the harness runs for it on the final state (its result is `record.queries[id]`). */
  sql?: (e: Of<S>) => ExpectationSql | undefined;
  /** What of the state it reads, when that is not its SQL. */
  reads?: (e: Of<S>) => StateRead | undefined;
  /** Grades one episode: a pure function of the record. */
  grade: (e: Of<S>, record: EpisodeRecord, ctx: GradeContext) => Grade;
  /** The checks the loader makes beyond the schema. */
  check?: (e: Of<S>) => KindProblem[];
  /** Where it names twin tools, checked against the twins even when the rest is invalid; `*` is each list item. */
  tools?: readonly FieldAt[];
}

/** One kind as the registry holds it: the declaration with its schema built. */
export interface Kind<K extends string = string, S extends Shape = Shape> extends Declaration<K, S> {
  schema: Full<S>;
}

/** Declares a kind: its schema is its fields beside id and critical, in a strict object. */
export function defineKind<K extends string, S extends Shape>(declaration: Declaration<K, S>): Kind<K, S> {
  return { ...declaration, schema: z.strictObject({ ...EXPECTATION_BASE, ...declaration.fields }) };
}
