// A small real suite for the gate-integrity attacks: a key-value table, twin tools given by the test,
// an agent script given by the test, and the stategate command run as a user runs it.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const ROOT = resolve(import.meta.dirname, '..', '..');

export const TEST_DATABASE_URL =
  process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

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
  engine?: 'embedded' | 'postgres';
  repeats?: number;
  schema?: string;
}

/** Writes the suite into `dir` (a new temporary directory when omitted) and returns it. */
export function writeSuite(files: SuiteFiles, dir = mkdtempSync(join(tmpdir(), 'sg-security-'))): string {
  mkdirSync(join(dir, 'db'), { recursive: true });
  mkdirSync(join(dir, 'scenarios'), { recursive: true });
  writeFileSync(
    join(dir, 'db', 'schema.sql'),
    files.schema ?? 'CREATE TABLE kv (k text PRIMARY KEY, v text NOT NULL);\n',
  );
  writeFileSync(join(dir, 'db', 'fixtures.yaml'), 'kv:\n  - { k: seed, v: fixture }\n');
  writeFileSync(join(dir, 'twin.yaml'), files.twin);
  for (const [rel, text] of Object.entries(files.agentFiles)) writeFileSync(join(dir, rel), text);
  for (const id of files.scenarios ?? ['only']) {
    writeFileSync(
      join(dir, 'scenarios', `${id}.yaml`),
      `id: ${id}\ninput:\n  message: "${id}"\nexpect:\n${files.expect}`,
    );
  }
  writeFileSync(
    join(dir, 'stategate.yml'),
    `version: 1
agent:
${files.agent}
database:
  engine: ${files.engine ?? 'embedded'}
  schema: [db/schema.sql]
  fixtures: [db/fixtures.yaml]
twins: [twin.yaml]
scenarios: [scenarios/*.yaml]
repeats: ${files.repeats ?? 1}
concurrency: 2
`,
  );
  return dir;
}

/** The agent prelude: a tool call over HTTP and the printed result object. */
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
`;

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
