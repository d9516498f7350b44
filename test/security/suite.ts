// A small real suite for the gate-integrity attacks: a key-value table, twin tools given by the test,
// an agent script given by the test, and a comparison run on the test server or the stategate
// command run as a user runs it.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runCompare } from '../../src/run/pipeline.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';

export const ROOT = resolve(import.meta.dirname, '..', '..');

export interface SuiteFiles {
  /** The twin file's text. */
  twin: string;
  /** Files of the agent, by path relative to the suite. */
  agentFiles: Record<string, string>;
  /** The agent section of stategate.yml, as YAML lines indented by two spaces. */
  agent: string;
  /** The scenario files' expectations, as YAML list items. */
  expect: string;
  scenarios?: string[];
  /** Every scenario's input message (default: the scenario's id). */
  message?: string;
  /** database.engine (default embedded); null leaves it to the run. */
  engine?: 'embedded' | 'postgres' | null;
  /** More lines of the database section, indented by two spaces. */
  database?: string;
  repeats?: number;
  schema?: string;
  /** db/fixtures.yaml (default: one seed row in kv); null: no fixtures. */
  fixtures?: string | null;
  /** Top-level sections appended to stategate.yml (a judge, say). */
  extra?: string;
}

/** A twin whose one tool `put` stores a value under a new key with `sql` and returns the row. */
export const putTwin = (sql = 'INSERT INTO kv (k, v) VALUES (:k, :v) RETURNING k, v') => `tools:
  put:
    description: Store a value under a key.
    risk: write
    input:
      type: object
      properties: { k: { type: string }, v: { type: string } }
      required: [k, v]
      additionalProperties: false
    sql: ${sql}
    returns: one
`;

/** A twin tool `put` (YAML lines below `tools:`) that overwrites the value of a key already there. */
export const UPDATE_PUT = `  put:
    risk: write
    input: { type: object, properties: { k: { type: string }, v: { type: string } }, required: [k, v] }
    sql: UPDATE kv SET v = :v WHERE k = :k
    returns: none
`;

/** Writes the suite into `dir` (a new temporary directory when omitted) and returns it. */
export function writeSuite(files: SuiteFiles, dir = mkdtempSync(join(tmpdir(), 'sg-security-'))): string {
  mkdirSync(join(dir, 'db'), { recursive: true });
  mkdirSync(join(dir, 'scenarios'), { recursive: true });
  writeFileSync(
    join(dir, 'db', 'schema.sql'),
    files.schema ?? 'CREATE TABLE kv (k text PRIMARY KEY, v text NOT NULL);\n',
  );
  const fixtures = files.fixtures === undefined ? 'kv:\n  - { k: seed, v: fixture }\n' : files.fixtures;
  if (fixtures !== null) writeFileSync(join(dir, 'db', 'fixtures.yaml'), fixtures);
  writeFileSync(join(dir, 'twin.yaml'), files.twin);
  for (const [rel, text] of Object.entries(files.agentFiles)) writeFileSync(join(dir, rel), text);
  for (const id of files.scenarios ?? ['only']) {
    writeFileSync(
      join(dir, 'scenarios', `${id}.yaml`),
      `id: ${id}\ninput:\n  message: "${files.message ?? id}"\nexpect:\n${files.expect}`,
    );
  }
  const engine = files.engine === undefined ? 'embedded' : files.engine;
  writeFileSync(
    join(dir, 'stategate.yml'),
    `version: 1
agent:
${files.agent}
database:
${engine === null ? '' : `  engine: ${engine}\n`}  schema: [db/schema.sql]
${fixtures === null ? '' : '  fixtures: [db/fixtures.yaml]\n'}${files.database ?? ''}twins: [twin.yaml]
scenarios: [scenarios/*.yaml]
repeats: ${files.repeats ?? 1}
concurrency: 2
${files.extra ?? ''}`,
  );
  return dir;
}

/** The agent prelude: a tool call over HTTP, and the result printed (done: a JSON reply; finish: as given). */
export const CALL_TOOL = `
async function call(tool, args) {
  const res = await fetch(process.env.STATEGATE_TOOLS_URL + '/tools/' + tool, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args),
  });
  return { status: res.status, body: await res.text() };
}
function done(reply, outcome = 'SUCCESS') {
  process.stdout.write(JSON.stringify({ reply: JSON.stringify(reply), outcome }) + '\\n');
}
function finish(result) { process.stdout.write(JSON.stringify(result) + '\\n'); }
`;

/** The agent command of a suite whose agent is agent.mjs. */
export const NODE_AGENT = '  command: node agent.mjs';

/** One comparison on the test server, in head's checkout: `head` alone when `base` is null. */
export function compareOnTestServer(
  head: string,
  base: string | null = null,
  out = join(head, '.stategate'),
) {
  return runCompare({ base, head, repo: head, out, engine: 'postgres', databaseUrl: TEST_DATABASE_URL });
}

// By path: the command runs in the suite's directory, where no node_modules is.
const TSX = pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the stategate command from source in `cwd`, as a separate process; with `killAfterMs`, a
 * command still running then is killed (SIGKILL: a stalled event loop handles no SIGTERM).
 */
export function stategate(
  cwd: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  killAfterMs?: number,
): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'src', 'cli', 'index.ts'), ...args], {
      cwd,
      env: { ...process.env, CI: '1', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(killAfterMs === undefined ? {} : { timeout: killAfterMs, killSignal: 'SIGKILL' as const }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}
