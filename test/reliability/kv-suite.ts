// A small real suite for the reliability tests: a key-value table, a read and a write tool, and an
// agent script given by the test. Both sides run from the same directory.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GradedEpisode } from '../../src/model/episode.js';

export const TEST_DATABASE_URL =
  process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const TWIN = `tools:
  put:
    description: Store a value under a key.
    risk: write
    input:
      type: object
      properties: { k: { type: string }, v: { type: string } }
      required: [k, v]
      additionalProperties: false
    sql: INSERT INTO kv (k, v) VALUES (:k, :v) RETURNING k, v
    returns: one
  list:
    description: Every stored key and value.
    risk: read
    input: { type: object, additionalProperties: false }
    sql: SELECT k, v FROM kv ORDER BY k, v
    returns: many
`;

/** Where an agent script can import its helpers from: posting to a tool and printing the result. */
export const AGENT_PRELUDE = `
const url = process.env.STATEGATE_TOOLS_URL;
async function call(base, tool, args) {
  const res = await fetch(base + '/tools/' + tool, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args),
  });
  return { status: res.status, body: await res.text() };
}
function done(reply) { process.stdout.write(JSON.stringify({ reply: JSON.stringify(reply), outcome: 'SUCCESS' }) + '\\n'); }
`;

export interface KvSuiteOptions {
  /** The agent's body, run after AGENT_PRELUDE (an ES module: top-level await works). */
  agent: string;
  /** Scenario ids; each becomes one scenario file. */
  scenarios: string[];
  /** Expectations of every scenario, as YAML list items. */
  expect: string;
  repeats?: number;
  concurrency?: number;
  engine?: 'postgres' | 'embedded';
  timeout?: string;
}

/** Writes the suite into a new temporary directory and returns it. */
export function kvSuite(opts: KvSuiteOptions): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-reliability-'));
  mkdirSync(join(dir, 'db'));
  mkdirSync(join(dir, 'scenarios'));
  writeFileSync(join(dir, 'db', 'schema.sql'), 'CREATE TABLE kv (k text NOT NULL, v text NOT NULL);\n');
  writeFileSync(join(dir, 'db', 'fixtures.yaml'), 'kv:\n  - { k: seed, v: fixture }\n');
  writeFileSync(join(dir, 'twin.yaml'), TWIN);
  writeFileSync(join(dir, 'agent.mjs'), `${AGENT_PRELUDE}\n${opts.agent}\n`);
  for (const id of opts.scenarios) {
    writeFileSync(
      join(dir, 'scenarios', `${id}.yaml`),
      `id: ${id}\ninput:\n  message: "${id}"\nexpect:\n${opts.expect}`,
    );
  }
  writeFileSync(
    join(dir, 'stategate.yml'),
    `version: 1
agent:
  command: node agent.mjs
  timeout: ${opts.timeout ?? '60s'}
database:
  engine: ${opts.engine ?? 'postgres'}
  schema: [db/schema.sql]
  fixtures: [db/fixtures.yaml]
twins: [twin.yaml]
scenarios: [scenarios/*.yaml]
repeats: ${opts.repeats ?? 1}
concurrency: ${opts.concurrency ?? 2}
`,
  );
  return dir;
}

/** Every graded episode of a run's episodes.jsonl. */
export function readEpisodes(outDir: string): GradedEpisode[] {
  return readFileSync(join(outDir, 'episodes.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as GradedEpisode);
}

/** The agent's reply of an episode, parsed back from the JSON the agent put in it. */
export function replyOf(g: GradedEpisode): any {
  const reply = g.record.agent.result?.reply;
  if (reply === undefined) throw new Error(`${g.record.episode}: no result (${g.record.agent.stderr})`);
  return JSON.parse(reply);
}
