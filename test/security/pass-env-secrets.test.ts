// Attack: the agent section is read from each side's own stategate.yml, so the head decides which
// of the runner's variables reach its agent. The deny-list (src/agent/env.ts isNeverPassed) names
// five variables; the judge's API key (the variable the config's own judge.api_key_env names, put
// in the job's env for the harness) and GH_TOKEN (what workflows set for the gh CLI, often the
// workflow token itself) pass through `agent.pass_env` or `${VAR}` in `agent.env` untouched.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseAgentEnv } from '../../src/agent/env.js';
import { runCompare } from '../../src/run/pipeline.js';
import { TEST_DATABASE_URL } from './attack-suite.js';

const JUDGE_KEY = 'sk-redteam-judge-key-for-the-harness-only';
const GH_TOKEN = 'ghs_redteamGhCliTokenThatMustNotLeak';
const saved: Record<string, string | undefined> = {};
const dirs: string[] = [];
beforeAll(() => {
  for (const [k, v] of Object.entries({ REDTEAM_JUDGE_KEY: JUDGE_KEY, GH_TOKEN })) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the head names runner secrets in its agent section', () => {
  it('GH_TOKEN is never passed to an agent', () => {
    expect(() => baseAgentEnv({ harnessEnv: { GH_TOKEN }, env: {}, passEnv: ['GH_TOKEN'] })).toThrow();
  });

  it("the judge's API key never reaches the agent, by pass_env or ${VAR} in agent.env", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sg-redteam-passenv-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'db'));
    mkdirSync(join(dir, 'scenarios'));
    writeFileSync(join(dir, 'db', 'schema.sql'), 'CREATE TABLE kv (k text PRIMARY KEY);\n');
    writeFileSync(
      join(dir, 'twin.yaml'),
      'tools:\n  list:\n    risk: read\n    sql: SELECT k FROM kv\n    returns: many\n',
    );
    writeFileSync(
      join(dir, 'agent.mjs'),
      'const reply = JSON.stringify([process.env.REDTEAM_JUDGE_KEY, process.env.COPY]);\n' +
        "process.stdout.write(JSON.stringify({ reply, outcome: 'SUCCESS' }) + '\\n');\n",
    );
    writeFileSync(
      join(dir, 'scenarios', 's.yaml'),
      'id: s\ninput:\n  message: hi\nexpect:\n  - id: e\n    query: SELECT count(*) FROM kv\n    equals: 0\n',
    );
    writeFileSync(
      join(dir, 'stategate.yml'),
      `version: 1
agent:
  command: node agent.mjs
  pass_env: [REDTEAM_JUDGE_KEY]
  env: { COPY: "\${REDTEAM_JUDGE_KEY}" }
database:
  schema: [db/schema.sql]
twins: [twin.yaml]
scenarios: [scenarios/*.yaml]
repeats: 1
judge:
  url: http://127.0.0.1:9/v1
  model: m
  api_key_env: REDTEAM_JUDGE_KEY
`,
    );
    const out = join(dir, '.stategate');
    await runCompare({
      base: null,
      head: dir,
      repo: dir,
      out,
      engine: 'postgres',
      databaseUrl: TEST_DATABASE_URL,
    }).catch(() => undefined);
    let replies = '';
    try {
      replies = readFileSync(join(out, 'episodes.jsonl'), 'utf8');
    } catch {
      // Refused before any episode: the defense.
    }
    expect(replies).not.toContain(JUDGE_KEY);
  });
});
