// The suite the benchmarks run: an items table of a chosen size (filled by SQL, so 100,000 rows
// load quickly), a read and a write tool, generated scenarios, and a trivial agent that makes
// three tool calls and prints its result.
import { createReadStream, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const ADMIN_URL =
  process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const SCHEMA = `CREATE TABLE items (
  id integer PRIMARY KEY, name text NOT NULL, qty integer NOT NULL DEFAULT 0, meta jsonb);
CREATE INDEX items_name ON items (name);
`;

/** Fixture SQL that fills `rows` items. */
export function fixtureSql(rows: number): string {
  return `INSERT INTO items (id, name, qty, meta)
SELECT i, 'item-' || i, 0, jsonb_build_object('color', (ARRAY['red','green','blue'])[1 + i % 3])
  FROM generate_series(1, ${rows}) AS i;
`;
}

export const TWIN = `tools:
  get_item:
    description: One item by id.
    risk: read
    input:
      type: object
      properties: { id: { type: integer } }
      required: [id]
      additionalProperties: false
    sql: SELECT id, name, qty FROM items WHERE id = :id
    returns: one
  bump:
    description: Adds one to an item's quantity.
    risk: write
    input:
      type: object
      properties: { id: { type: integer } }
      required: [id]
      additionalProperties: false
    sql: UPDATE items SET qty = qty + 1 WHERE id = :id RETURNING id, qty
    returns: one
`;

/** The trivial agent: read, write, read back, print the result line. */
export const TRIVIAL_AGENT = `const url = process.env.STATEGATE_TOOLS_URL;
const call = async (tool, args) => {
  const res = await fetch(url + '/tools/' + tool, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args),
  });
  return res.json();
};
await call('get_item', { id: 1 });
await call('bump', { id: 1 });
const after = await call('get_item', { id: 1 });
process.stdout.write(JSON.stringify({ reply: 'qty ' + after.result.qty, outcome: 'SUCCESS' }) + '\\n');
`;

/** The suite's agent: a script and the `agent:` section of stategate.yml that runs it. */
export interface BenchAgent {
  file: string;
  source: string;
  /** The lines under `agent:`, each indented two spaces. */
  config: string[];
}

/** The trivial agent, one process per episode. */
export const TRIVIAL: BenchAgent = {
  file: 'agent.mjs',
  source: TRIVIAL_AGENT,
  config: ['  command: node agent.mjs', '  timeout: 60s'],
};

export interface BenchSuite {
  dir: string;
  scenarios: number;
}

/** Writes a suite with `rows` fixture rows and `scenarios` scenarios into a new temporary directory. */
export function benchSuite(
  rows: number,
  scenarios: number,
  repeats = 1,
  concurrency = 1,
  agent: BenchAgent = TRIVIAL,
): BenchSuite {
  const dir = mkdtempSync(join(tmpdir(), 'sg-bench-suite-'));
  mkdirSync(join(dir, 'db'));
  mkdirSync(join(dir, 'scenarios'));
  writeFileSync(join(dir, 'db', 'schema.sql'), SCHEMA);
  writeFileSync(join(dir, 'db', 'fixtures.sql'), fixtureSql(rows));
  writeFileSync(join(dir, 'twin.yaml'), TWIN);
  writeFileSync(join(dir, agent.file), agent.source);
  for (let i = 0; i < scenarios; i++) {
    const id = `bump-${String(i).padStart(4, '0')}`;
    writeFileSync(
      join(dir, 'scenarios', `${id}.yaml`),
      `id: ${id}
input:
  message: "Bump item 1 (${i})"
expect:
  - id: bumped-once
    query: SELECT qty FROM items WHERE id = 1
    equals: 1
  - id: only-items
    only_changes: [items]
`,
    );
  }
  writeFileSync(
    join(dir, 'stategate.yml'),
    `version: 1
agent:
${agent.config.join('\n')}
database:
  engine: postgres
  schema: [db/schema.sql]
  fixtures: [db/fixtures.sql]
twins: [twin.yaml]
scenarios: [scenarios/*.yaml]
repeats: ${repeats}
concurrency: ${concurrency}
`,
  );
  return { dir, scenarios };
}

/** Every episode's stage timings (EpisodeRecord.timings) of a run's episodes.jsonl, a line at a time. */
export async function episodeTimings(file: string): Promise<Record<string, number>[]> {
  const out: Record<string, number>[] = [];
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (line) out.push((JSON.parse(line) as { record: { timings: Record<string, number> } }).record.timings);
  }
  return out;
}

/** Median, p99, min and max of a list of numbers. */
export function summary(values: number[]): {
  median: number;
  p99: number;
  min: number;
  max: number;
  n: number;
} {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { median: at(0.5), p99: at(0.99), min: s[0], max: s[s.length - 1], n: s.length };
}

/** A number of milliseconds with one decimal. */
export const ms = (v: number) => `${v.toFixed(1)} ms`;

/**
 * Replaces the section of docs/performance.md between `<!-- NAME:begin -->` and `<!-- NAME:end -->`
 * with `section` (which carries both markers), or appends it when the markers are not there yet.
 */
export function writeDocSection(name: string, section: string): void {
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  if (!section.startsWith(begin) || !section.endsWith(end))
    throw new Error(`the section must be within ${begin} and ${end}`);
  const file = join(import.meta.dirname, '..', 'docs', 'performance.md');
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf(begin);
  const to = text.indexOf(end);
  writeFileSync(
    file,
    at >= 0 && to > at
      ? `${text.slice(0, at)}${section}${text.slice(to + end.length)}`
      : `${text.trimEnd()}\n\n${section}\n`,
  );
}
