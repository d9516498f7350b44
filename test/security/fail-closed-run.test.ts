// Fail closed, on the real pipeline (postgres engine): a run that tested nothing is never a pass.
// - An agent whose key (agent.pass_env) the workflow never set fails every episode before its first
//   tool call: the run could not run (NothingCompletedError, exit 1) and names the variable.
// - A head that adds scenarios whose state.sql never ends cannot hold the workers: state.sql runs
//   under the episode's timeout, is not run again, and the base's scenarios run first, so the head's
//   regression is still found (BLOCK).
// - A tool that fails inside the harness (a server failure, not the agent's doing) runs the episode
//   again with the same seed, twice, before the case is incomplete, which the default gate blocks.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ProgressEvent } from '../../src/run/api.js';
import { NothingCompletedError } from '../../src/run/episode-ends.js';
import { runCompare } from '../../src/run/pipeline.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const CALL_TOOL = `
const input = JSON.parse(require('node:fs').readFileSync(0, 'utf8') || '{}');
const url = process.env.STATEGATE_TOOLS_URL;
(async () => {
  const res = await fetch(url + '/tools/put', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ k: 'x' }) });
  await res.text();
  process.stdout.write(JSON.stringify({ reply: 'done', outcome: 'SUCCESS' }) + '\\n');
})();
`;

interface SuiteFiles {
  agent: string;
  scenarios: Record<string, string>;
  config?: string;
  schema?: string;
  twin?: string;
}

/** A checkout directory with a small suite: table kv, a `put` tool, the given agent and scenarios. */
function checkout(files: SuiteFiles): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-fail-closed-'));
  dirs.push(dir);
  // Agents run as another uid when the harness is root: they must be able to read the suite.
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'scenarios'));
  writeFileSync(join(dir, 'schema.sql'), files.schema ?? 'CREATE TABLE kv (k text NOT NULL);\n');
  writeFileSync(
    join(dir, 'twin.yaml'),
    files.twin ??
      `tools:
  put:
    risk: write
    input: { type: object, properties: { k: { type: string } }, required: [k], additionalProperties: false }
    sql: INSERT INTO kv (k) VALUES (:k)
`,
  );
  writeFileSync(join(dir, 'agent.cjs'), files.agent);
  for (const [name, text] of Object.entries(files.scenarios))
    writeFileSync(join(dir, 'scenarios', name), text);
  writeFileSync(
    join(dir, 'stategate.yml'),
    files.config ??
      `version: 1
agent:
  command: node agent.cjs
  timeout: 3s
database:
  schema: [schema.sql]
twins: [twin.yaml]
scenarios: [scenarios/*.yaml]
repeats: 1
concurrency: 1
`,
  );
  return dir;
}

const ONE_WRITE = `id: one-write
input: { message: put x once }
expect:
  - id: one-row
    critical: true
    query: SELECT count(*) FROM kv
    equals: 1
`;

async function compare(base: string, head: string, logs: string[] = []) {
  return runCompare({
    base,
    head,
    repo: head,
    out: join(head, '.stategate'),
    engine: 'postgres',
    databaseUrl: TEST_DATABASE_URL,
    onProgress: (e: ProgressEvent) => {
      if (e.type === 'log') logs.push(e.message);
    },
  });
}

describe('fail closed: a run that tested nothing is not a pass', () => {
  it('an unset pass_env key on both sides: could not run, naming the variable', async () => {
    delete process.env.SG_FAIL_CLOSED_MISSING_KEY;
    const agent = `if (!process.env.SG_FAIL_CLOSED_MISSING_KEY) { console.error('no key'); process.exit(1); }\n${CALL_TOOL}`;
    const config = `version: 1
agent:
  command: node agent.cjs
  pass_env: [SG_FAIL_CLOSED_MISSING_KEY]
database:
  schema: [schema.sql]
twins: [twin.yaml]
scenarios: [scenarios/*.yaml]
repeats: 2
`;
    const base = checkout({ agent, config, scenarios: { 'one.yaml': ONE_WRITE } });
    const head = checkout({ agent, config, scenarios: { 'one.yaml': ONE_WRITE } });
    const logs: string[] = [];
    const run = compare(base, head, logs);
    await expect(run).rejects.toThrow(NothingCompletedError);
    await expect(run).rejects.toThrow(
      /none of the 4 episodes completed.*exited with code 1.*SG_FAIL_CLOSED_MISSING_KEY/s,
    );
    // Said at the start too, before any episode ran.
    expect(logs.some((l) => /^base: agent\.pass_env .*SG_FAIL_CLOSED_MISSING_KEY/.test(l))).toBe(true);
    // The report is still written, and its case is incomplete (the default gate blocks it), not unchanged.
    const report = JSON.parse(readFileSync(join(head, '.stategate', 'report.json'), 'utf8'));
    expect(report.cases[0].class).toBe('incomplete');
    expect(report.cases[0].reason).toMatch(/^Neither side completed an episode: /);
    expect(report.verdict).toBe('BLOCK');
  }, 120_000);

  it("a head's never-ending state.sql is cut at the timeout and runs after the base's scenarios: BLOCK", async () => {
    const good = CALL_TOOL;
    const twice = CALL_TOOL.replace(
      '(async () => {\n',
      "(async () => {\n  await fetch(url + '/tools/put', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ k: 'y' }) });\n",
    );
    const stall = (id: string) =>
      `id: ${id}\ninput: { message: wait }\nstate:\n  sql: ["SELECT pg_sleep(3600)"]\nexpect:\n  - id: none\n    query: SELECT count(*) FROM kv\n    equals: 0\n`;
    const base = checkout({ agent: good, scenarios: { 'one.yaml': ONE_WRITE } });
    // The stalls sort before the regression: without base-first scheduling they would run first.
    const head = checkout({
      agent: twice,
      scenarios: {
        'a-stall.yaml': stall('a-stall'),
        'b-stall.yaml': stall('b-stall'),
        'one.yaml': ONE_WRITE,
      },
    });
    const started = Date.now();
    const result = await compare(base, head);
    // Four stalled episodes, cut at 3 s each and not run again.
    expect(Date.now() - started).toBeLessThan(60_000);
    const byId = new Map(result.report.cases.map((c) => [c.id, c]));
    expect(byId.get('one-write')?.class).toBe('new-critical-failure');
    expect(byId.get('a-stall')?.class).toBe('incomplete');
    expect(byId.get('a-stall')?.reason).toMatch(/ran past the episode's timeout of 3000 ms/);
    expect(result.report.verdict).toBe('BLOCK');
    const order = readFileSync(join(head, '.stategate', 'episodes.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).record.scenario as string);
    expect(order.slice(0, 2)).toEqual(['one-write', 'one-write']);
  }, 120_000);

  it('a tool failing inside the harness runs the episode again twice, then the case is incomplete: BLOCK', async () => {
    // Inside the checkout: the agent's own /tmp is private to it.
    const drop = 'drop';
    const agent = `const fs = require('node:fs');
const message = JSON.parse(fs.readFileSync(0, 'utf8')).message;
if (message !== 'call') { process.stdout.write(JSON.stringify({ reply: 'nothing to do', outcome: 'SUCCESS' }) + '\\n'); process.exit(0); }
fs.appendFileSync('drop/attempts', process.env.STATEGATE_SEED + '\\n');
const url = process.env.STATEGATE_TOOLS_URL;
(async () => {
  const res = await fetch(url + '/tools/put', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ k: 'x' }) });
  await res.text();
  process.stdout.write(JSON.stringify({ reply: 'done', outcome: 'SUCCESS' }) + '\\n');
})();
`;
    // SQLSTATE 58030 (io_error) is the server's failure, not something the agent's arguments provoked.
    const schema = `CREATE TABLE kv (k text NOT NULL);
CREATE FUNCTION boom(k text) RETURNS void LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk gone' USING ERRCODE = '58030'; END $$;
`;
    const twin = `tools:
  put:
    risk: write
    input: { type: object, properties: { k: { type: string } }, required: [k], additionalProperties: false }
    sql: SELECT boom(:k)
`;
    const config = `version: 1
agent:
  command: node agent.cjs
database:
  schema: [schema.sql]
twins: [twin.yaml]
scenarios: [scenarios/*.yaml]
repeats: 1
`;
    const quiet =
      'id: quiet\ninput: { message: rest }\nexpect:\n  - id: none\n    query: SELECT count(*) FROM kv\n    equals: 0\n';
    const dir = checkout({
      agent,
      schema,
      twin,
      config,
      scenarios: { 'one.yaml': ONE_WRITE.replace('put x once', 'call'), 'quiet.yaml': quiet },
    });
    mkdirSync(join(dir, drop));
    chmodSync(join(dir, drop), 0o777);
    const logs: string[] = [];
    const result = await runCompare({
      base: null,
      head: dir,
      repo: dir,
      out: join(dir, '.stategate'),
      engine: 'postgres',
      databaseUrl: TEST_DATABASE_URL,
      onProgress: (e) => {
        if (e.type === 'log') logs.push(e.message);
      },
    });
    const seeds = readFileSync(join(dir, drop, 'attempts'), 'utf8')
      .trim()
      .split('\n');
    expect(seeds).toHaveLength(3);
    expect(new Set(seeds).size).toBe(1);
    expect(logs.filter((l) => /running it again with the same seed/.test(l))).toHaveLength(2);
    const byId = new Map(result.report.cases.map((c) => [c.id, c]));
    expect(byId.get('one-write')?.class).toBe('incomplete');
    expect(byId.get('one-write')?.reason).toMatch(/disk gone/);
    expect(result.report.verdict).toBe('BLOCK');
  }, 120_000);
});
