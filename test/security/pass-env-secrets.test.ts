// Attack: the agent section is read from each side's own stategate.yml, so the head decides which
// of the runner's variables reach its agent. The deny-list (src/agent/env.ts isNeverPassed) names
// five variables; the judge's API key (the variable the config's own judge.api_key_env names, put
// in the job's env for the harness) and GH_TOKEN (what workflows set for the gh CLI, often the
// workflow token itself) pass through `agent.pass_env` or `${VAR}` in `agent.env` untouched.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { baseAgentEnv } from '../../src/agent/env.js';
import { setEnvForFile } from '../helpers/process-env.js';
import { compareOnTestServer, NODE_AGENT, writeSuite } from './suite.js';

const JUDGE_KEY = 'sk-canary-judge-key-for-the-harness-only';
const GH_TOKEN = 'ghs_canaryGhCliTokenThatMustNotLeak';
setEnvForFile({ PASSED_JUDGE_KEY: JUDGE_KEY, GH_TOKEN });
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the head names runner secrets in its agent section', () => {
  it('GH_TOKEN is never passed to an agent', () => {
    expect(() => baseAgentEnv({ harnessEnv: { GH_TOKEN }, env: {}, passEnv: ['GH_TOKEN'] })).toThrow();
  });

  it("the judge's API key never reaches the agent, by pass_env or ${VAR} in agent.env", async () => {
    const dir = writeSuite({
      schema: 'CREATE TABLE kv (k text PRIMARY KEY);\n',
      fixtures: null,
      twin: 'tools:\n  list:\n    risk: read\n    sql: SELECT k FROM kv\n    returns: many\n',
      agentFiles: {
        'agent.mjs':
          'const reply = JSON.stringify([process.env.PASSED_JUDGE_KEY, process.env.COPY]);\n' +
          "process.stdout.write(JSON.stringify({ reply, outcome: 'SUCCESS' }) + '\\n');\n",
      },
      agent: `${NODE_AGENT}\n  pass_env: [PASSED_JUDGE_KEY]\n  env: { COPY: "\${PASSED_JUDGE_KEY}" }`,
      scenarios: ['s'],
      message: 'hi',
      expect: '  - id: e\n    query: SELECT count(*) FROM kv\n    equals: 0\n',
      engine: null,
      extra: 'judge:\n  url: http://127.0.0.1:9/v1\n  model: m\n  api_key_env: PASSED_JUDGE_KEY\n',
    });
    dirs.push(dir);
    const out = join(dir, '.stategate');
    await compareOnTestServer(dir).catch(() => undefined);
    let replies = '';
    try {
      replies = readFileSync(join(out, 'episodes.jsonl'), 'utf8');
    } catch {
      // Refused before any episode: the defense.
    }
    expect(replies).not.toContain(JUDGE_KEY);
  });
});
