// Property tests over the loader: whatever a scenario file holds, loadSuite returns a suite or
// problems with a file and a position inside that file; it never throws and never hangs.
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { loadSuite } from '../../src/config/load.js';
import { ScenarioFile } from '../../src/config/schema.js';
import type { LoadResult } from '../../src/config/suite.js';
import { looksLikeCrash, makeSuite, tempRoot, VALID_DIR, VALID_ENV } from './helpers.js';

const RUNS = 200;
const TARGET = 'scenarios/refunds/timeout.yaml';
const VALID_TEXT = readFileSync(path.join(VALID_DIR, TARGET), 'utf8');
const VALID_SCENARIO = parse(VALID_TEXT) as Record<string, unknown>;

let root: Awaited<ReturnType<typeof tempRoot>>;
let dir: string;
beforeAll(async () => {
  root = await tempRoot();
  dir = await makeSuite(root.dir);
});
afterAll(async () => {
  await root.remove();
});

/** Writes the scenario file and loads the suite; asserts the shape every result must have. */
async function loadWith(content: string): Promise<LoadResult> {
  await writeFile(path.join(dir, TARGET), content);
  const result = await loadSuite(path.join(dir, 'stategate.yml'), { env: VALID_ENV });
  if (result.ok) return result;
  expect(result.problems.length).toBeGreaterThan(0);
  const lines = content.split('\n').length;
  for (const p of result.problems) {
    expect(typeof p.file).toBe('string');
    expect(Number.isInteger(p.line) && p.line >= 1).toBe(true);
    expect(Number.isInteger(p.col) && p.col >= 1).toBe(true);
    expect(p.message.length).toBeGreaterThan(0);
    expect(looksLikeCrash(p), p.message).toBe(false);
    // Every problem is about the scenario file we wrote, and inside it.
    expect(path.resolve(p.file)).toBe(path.join(dir, TARGET));
    expect(p.line).toBeLessThanOrEqual(lines + 1);
  }
  return result;
}

const TOKENS = [
  'id: ',
  'input:',
  'message: hi',
  'expect:',
  '- id: a',
  'query: SELECT 1',
  'equals: 1',
  'faults:',
  'tool: refund_payment',
  'fault: delay',
  'tools: [lookup_order]',
  'outcome: SUCCESS',
  '\n',
  '\n  ',
  '  ',
  ' ',
  '- ',
  ': ',
  ':',
  '[',
  ']',
  '{',
  '}',
  ', ',
  '"',
  "'",
  '&a ',
  '*a',
  '!tag ',
  '# c',
  '---',
  '|',
  '>',
  '\t',
  '${X}',
  '? ',
  '@',
  '%YAML 1.2',
  '\\',
  'null',
  '~',
  '1e9',
  '-1',
  'true',
  '0x1F',
  '<<: *a',
];

const yamlish = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.array(fc.constantFrom(...TOKENS), { maxLength: 60 }).map((t) => t.join('')),
);

/** Every path into a plain value, so a mutation can target any field. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [prefix];
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) out.push(...paths(v, [...prefix, i]));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
  }
  return out;
}
const ALL_PATHS = paths(VALID_SCENARIO).filter((p) => p.length > 0);

type Mutation =
  | { op: 'delete'; at: number }
  | { op: 'set'; at: number; value: unknown }
  | { op: 'add'; at: number; key: string; value: unknown };

function mutate(original: unknown, mutations: Mutation[]): unknown {
  const value = structuredClone(original);
  for (const m of mutations) {
    const target = ALL_PATHS[m.at % ALL_PATHS.length];
    let parent: any = value;
    for (const seg of target.slice(0, -1)) parent = parent?.[seg];
    if (parent === null || typeof parent !== 'object') continue;
    const last = target[target.length - 1];
    if (m.op === 'delete') {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
    } else if (m.op === 'set') parent[last] = m.value;
    else if (parent[last] && typeof parent[last] === 'object' && !Array.isArray(parent[last])) {
      parent[last][m.key] = m.value;
    }
  }
  return value;
}

const jsonish = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    'refund_payment',
    'nope',
    'SUCCESS',
    'timeout_after_mutation',
    'wirte',
    '',
    '([',
    1,
    -1,
    0.5,
    true,
    null,
  ),
);
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('set' as const), at: fc.nat(), value: jsonish }),
  fc.record({
    op: fc.constant('add' as const),
    at: fc.nat(),
    key: fc.constantFrom('extra', 'critical', 'when', 'equals', 'outcome', 'tool', 'id'),
    value: jsonish,
  }),
);

describe('loader properties', () => {
  it('the unmutated file loads', async () => {
    expect((await loadWith(VALID_TEXT)).ok).toBe(true);
  });

  it('random YAML-ish text: a suite or problems with file:line, never a throw', async () => {
    await fc.assert(
      fc.asyncProperty(yamlish, async (text) => {
        await loadWith(text);
      }),
      { numRuns: RUNS },
    );
  });

  it('random mutations of a valid scenario: never a throw, and never accepted when the schema rejects it', async () => {
    const outcomes = { loaded: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 4 }), async (mutations) => {
        const text = stringify(mutate(VALID_SCENARIO, mutations));
        const result = await loadWith(text);
        const schemaAccepts = ScenarioFile.safeParse(parse(text)).success;
        if (!schemaAccepts) expect(result.ok).toBe(false);
        if (result.ok) expect(result.suite.scenarios.map((s) => s.file)).toContain(TARGET);
        outcomes[result.ok ? 'loaded' : 'refused']++;
      }),
      { numRuns: RUNS },
    );
    // Both outcomes occur, so the property above is not vacuous.
    expect(outcomes.loaded).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(0);
  });

  it('random character edits of a valid scenario: never a throw', async () => {
    const edit = fc.record({
      at: fc.nat({ max: VALID_TEXT.length }),
      remove: fc.nat({ max: 5 }),
      insert: fc.oneof(
        fc.string({ maxLength: 4 }),
        fc.constantFrom(':', '-', '\n', '  ', '"', '[', '{', '\t'),
      ),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 3 }), async (edits) => {
        let text = VALID_TEXT;
        for (const e of edits) {
          const at = Math.min(e.at, text.length);
          text = text.slice(0, at) + e.insert + text.slice(at + e.remove);
        }
        await loadWith(text);
      }),
      { numRuns: RUNS },
    );
  });
});
