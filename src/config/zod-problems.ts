// Turning zod issues into Problems a person can act on: the position of the field in the YAML file,
// its path, and a message saying what was expected and what was found.
import type { z } from 'zod';
import { describeValue, didYouMean } from './suggest.js';
import type { Problem } from './suite.js';
import { type FieldPath, problemAt, type YamlSource } from './yaml-source.js';

type Issue = z.core.$ZodIssue;

/** Validates `value` against `schema`; the data, or problems located in `source` under `prefix`. */
export function validate<S extends z.ZodType>(
  schema: S,
  value: unknown,
  source: YamlSource,
  prefix: FieldPath = [],
): { ok: true; data: z.infer<S> } | { ok: false; problems: Problem[] } {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return { ok: true, data: result.data };
  const problems = result.error.issues.flatMap((issue) => issueProblems(issue, source, schema, prefix, []));
  return { ok: false, problems };
}

function issueProblems(
  issue: Issue,
  source: YamlSource,
  root: z.ZodType,
  prefix: FieldPath,
  outer: FieldPath,
): Problem[] {
  const local = [...outer, ...(issue.path as (string | number)[])];
  const full = [...prefix, ...local];
  const missing = ['invalid_type', 'invalid_value', 'invalid_union'].includes(issue.code);
  if (missing && issue.input === undefined && full.length > 0) {
    return [problemAt(source, full, `missing required field '${String(full[full.length - 1])}'`)];
  }
  switch (issue.code) {
    case 'invalid_union': {
      const branch = bestBranch(issue.errors, issue.input);
      if (branch) return branch.flatMap((i) => issueProblems(i, source, root, prefix, local));
      const expected = [...new Set(issue.errors.map((b) => expectedOf(b[0])).filter(Boolean))].join(' or ');
      return [
        problemAt(source, full, `expected ${expected || 'another value'}, got ${describeValue(issue.input)}`),
      ];
    }
    case 'unrecognized_keys': {
      const known = objectKeysAt(root, local);
      return issue.keys.map((key) =>
        problemAt(
          source,
          [...full, key],
          `unknown key '${key}'${didYouMean(key, known)}${known.length > 0 ? ` (expected one of ${known.join(', ')})` : ''}`,
          { key: true },
        ),
      );
    }
    case 'invalid_key': {
      const inner = issue.issues[0];
      const what = inner ? expectedOf(inner) : '';
      const key = String(issue.path[issue.path.length - 1]);
      return [
        problemAt(source, full, `invalid key '${key}'${what ? `: expected ${what}` : ''}`, { key: true }),
      ];
    }
    case 'invalid_type':
      return [problemAt(source, full, `expected ${expectedOf(issue)}, got ${describeValue(issue.input)}`)];
    case 'invalid_value': {
      const hint = typeof issue.input === 'string' ? didYouMean(issue.input, issue.values.map(String)) : '';
      return [
        problemAt(source, full, `expected ${expectedOf(issue)}, got ${describeValue(issue.input)}${hint}`),
      ];
    }
    case 'custom':
      return [problemAt(source, full, issue.message)];
    case 'too_small':
    case 'too_big':
      // A schema's own message says more than the bound ("30 is 30 ms; did you mean 30s?").
      if (!/^Too (small|big)/.test(issue.message)) return [problemAt(source, full, issue.message)];
      return [problemAt(source, full, `expected ${expectedOf(issue)}, got ${describeValue(issue.input)}`)];
    default:
      return [problemAt(source, full, `expected ${expectedOf(issue)}, got ${describeValue(issue.input)}`)];
  }
}

/** The union member that the input was evidently meant for: the only one whose type it has. */
function bestBranch(branches: Issue[][], input: unknown): Issue[] | undefined {
  const typed = branches.filter((b) => !b.some((i) => i.path.length === 0 && isTypeMismatch(i, input)));
  return typed.length >= 1 ? typed[0] : undefined;
}

function isTypeMismatch(issue: Issue, input: unknown): boolean {
  if (issue.code === 'invalid_type') return true;
  // A literal or enum of another type (`every: true` given a mapping) is a type mismatch too.
  if (issue.code === 'invalid_value') return !issue.values.some((v) => typeof v === typeof input);
  return false;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'a mapping',
  record: 'a mapping',
  map: 'a mapping',
  array: 'a list',
  tuple: 'a list',
  null: 'an empty value',
  undefined: 'nothing',
  nan: 'a number',
};

/** What an issue expected, in words: "a mapping", "one of read | write", "at least 1 item". */
function expectedOf(issue: Issue | undefined): string {
  if (!issue) return '';
  switch (issue.code) {
    case 'invalid_type':
      return TYPE_NAMES[issue.expected] ?? `a ${issue.expected}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? literal(issue.values[0])
        : `one of ${issue.values.map((v) => String(v)).join(' | ')}`;
    case 'too_small':
      return bound(issue.origin, issue.minimum, issue.inclusive ?? true, 'min');
    case 'too_big':
      return bound(issue.origin, issue.maximum, issue.inclusive ?? true, 'max');
    case 'invalid_format':
      // A schema's own message names the format ("a duration such as 60s"); zod's default does not.
      return /^Invalid/.test(issue.message)
        ? issue.format === 'regex' && 'pattern' in issue
          ? `text matching ${String(issue.pattern)}`
          : `a valid ${issue.format}`
        : issue.message;
    case 'not_multiple_of':
      return `a multiple of ${String(issue.divisor)}`;
    default:
      return issue.message;
  }
}

function literal(v: unknown): string {
  return typeof v === 'string' ? `'${v}'` : String(v);
}

function bound(origin: string, limit: number | bigint, inclusive: boolean, side: 'min' | 'max'): string {
  const n = Number(limit);
  if (origin === 'string') {
    if (side === 'min' && n === 1) return 'a non-empty string';
    return `a string of ${side === 'min' ? 'at least' : 'at most'} ${n} characters`;
  }
  if (origin === 'array' || origin === 'set') {
    if (side === 'min' && n === 1) return 'a non-empty list';
    return `a list of ${side === 'min' ? 'at least' : 'at most'} ${n} items`;
  }
  const op = side === 'min' ? (inclusive ? '>=' : '>') : inclusive ? '<=' : '<';
  return `a number ${op} ${n}`;
}

// ---------------------------------------------------------------- schema introspection

type Def = { type: string; [k: string]: unknown };
const defOf = (s: unknown): Def => (s as { _zod: { def: Def } })._zod.def;

/** Strips wrappers (optional, default, transforms) to reach the schema that shapes the value. */
function unwrap(schema: unknown): unknown {
  let s = schema;
  for (let i = 0; i < 20; i++) {
    const def = defOf(s);
    if (
      ['optional', 'default', 'prefault', 'nullable', 'readonly', 'catch', 'nonoptional'].includes(def.type)
    ) {
      s = def.innerType;
    } else if (def.type === 'pipe') s = def.in;
    else return s;
  }
  return s;
}

function options(schema: unknown): unknown[] {
  const s = unwrap(schema);
  const def = defOf(s);
  return def.type === 'union' ? (def.options as unknown[]).flatMap(options) : [s];
}

/** The keys the object schema at `path` accepts, for listing them beside an unknown key. */
export function objectKeysAt(schema: z.ZodType, path: FieldPath): string[] {
  let candidates: unknown[] = options(schema);
  for (const segment of path) {
    const next: unknown[] = [];
    for (const c of candidates) {
      const def = defOf(c);
      if (def.type === 'object' && typeof segment === 'string') {
        const field = (def.shape as Record<string, unknown>)[segment];
        if (field) next.push(...options(field));
      } else if (def.type === 'array' && typeof segment === 'number') next.push(...options(def.element));
      else if (def.type === 'record') next.push(...options(def.valueType));
    }
    candidates = next;
  }
  const keys = new Set<string>();
  for (const c of candidates) {
    const def = defOf(c);
    if (def.type === 'object') for (const k of Object.keys(def.shape as object)) keys.add(k);
  }
  return [...keys];
}
