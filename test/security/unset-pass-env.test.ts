// Attack (by omission): a workflow that never sets the secret the agent needs. The agent names it in
// `agent.pass_env`, gets nothing, and fails every episode of both sides alike: every case read
// "unchanged" and the gate passed a change nothing tested. `validate` names each pass_env variable
// this environment does not set (absent, or empty as GitHub sets a missing secret) at its line of
// stategate.yml, and exits 1; unsetPassEnv is what the start of a run reports them with.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { unsetPassEnv } from '../../src/config/pass-env.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { stategate, writeSuite } from './suite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const TWIN = `tools:
  list:
    description: Every key.
    risk: read
    sql: SELECT k FROM kv ORDER BY k
    returns: many
`;
const AGENT = `if (!process.env.SG_MODEL_KEY) process.exit(1);
process.stdout.write(JSON.stringify({ reply: 'ok', outcome: 'SUCCESS' }) + '\\n');
`;

describe('pass_env variables the environment does not set', () => {
  it('are named, absent or empty, in order and once each', () => {
    const env = { SG_SET: 'x', SG_EMPTY: '' };
    expect(unsetPassEnv(['SG_SET', 'SG_ABSENT', 'SG_EMPTY', 'SG_ABSENT'], env)).toEqual([
      'SG_ABSENT',
      'SG_EMPTY',
    ]);
    expect(unsetPassEnv(['SG_SET'], env)).toEqual([]);
    expect(unsetPassEnv([], env)).toEqual([]);
  });

  it('are problems `validate` reports at their line of stategate.yml', { timeout: 300_000 }, async () => {
    const dir = writeSuite({
      twin: TWIN,
      agentFiles: { 'agent.mjs': AGENT },
      agent: '  command: node agent.mjs\n  pass_env:\n    - SG_MODEL_KEY\n    - SG_OTHER_KEY\n    - HOME',
      expect: '  - id: one\n    query: SELECT count(*) FROM kv\n    equals: 1\n',
      engine: 'postgres',
    });
    dirs.push(dir);
    const env = { STATEGATE_DATABASE_URL: TEST_DATABASE_URL, SG_OTHER_KEY: '' };
    const res = await stategate(dir, ['validate', '--engine', 'postgres'], env);
    expect(res.code).toBe(1);
    // stategate.yml: line 5 is `- SG_MODEL_KEY`, line 6 `- SG_OTHER_KEY`; HOME is set.
    expect(res.stderr).toMatch(
      /^stategate\.yml:5:7: agent\.pass_env names SG_MODEL_KEY, which is not set \(or empty\) in this environment/m,
    );
    expect(res.stderr).toMatch(/^stategate\.yml:6:7: agent\.pass_env names SG_OTHER_KEY, which is not set/m);
    expect(res.stderr).not.toMatch(/HOME/);
    expect(res.stderr).toMatch(/^2 problems found\.$/m);

    const set = await stategate(dir, ['validate', '--engine', 'postgres'], {
      ...env,
      SG_MODEL_KEY: 'k',
      SG_OTHER_KEY: 'k',
    });
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
  });
});
