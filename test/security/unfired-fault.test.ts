// Attack: a head whose scenario injects a fault into a tool its agent never calls. The scenario
// reads as "refunds survive a provider timeout", the run passes, and nothing says the timeout never
// happened. report.json now says, per case and side, in how many repeats each fault rule applied to
// a call, and the report shows a rule that fired in no repeat as a finding; report.json with the
// field still passes the strict schema `merge` reads it with. On every engine.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/pipeline.js';
import { validateReport } from '../../src/run/read-report.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { CALL_TOOL, writeSuite } from './suite.js';

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
  put:
    description: Store a value.
    risk: write
    input: { type: object, properties: { k: { type: string }, v: { type: string } }, required: [k, v] }
    sql: INSERT INTO kv (k, v) VALUES (:k, :v)
    returns: none
`;
/** Lists, never puts: the fault on put never applies. */
const AGENT = `${CALL_TOOL}
const listed = await call('list', {});
done({ listed: listed.status });
`;
const EXPECT = `  - id: nothing-written
    query: SELECT count(*) FROM kv
    equals: 1
`;

describe.each(['postgres', 'embedded'] as const)(
  'on the %s engine, a fault on a tool never called',
  (engine) => {
    it('is counted in report.json and shown as a finding', { timeout: 300_000 }, async () => {
      const dir = writeSuite({
        twin: TWIN,
        agentFiles: { 'agent.mjs': AGENT },
        agent: '  command: node agent.mjs\n  timeout: 30s',
        expect: EXPECT,
        engine,
        repeats: 2,
      });
      dirs.push(dir);
      // Two rules: one on the tool the agent calls (fires every repeat), one on the tool it never calls.
      const file = join(dir, 'scenarios', 'only.yaml');
      const scenario = readFileSync(file, 'utf8').replace(
        'expect:\n',
        'faults:\n  - { tool: list, fault: delay, delay_ms: 1 }\n  - { tool: put, fault: timeout_after_mutation }\nexpect:\n',
      );
      writeFileSync(file, scenario);
      const out = join(dir, 'out');
      const { report, markdown } = await runCompare({
        base: null,
        head: dir,
        repo: dir,
        out,
        engine,
        databaseUrl: engine === 'postgres' ? TEST_DATABASE_URL : undefined,
      });
      expect(report.cases[0].head?.faults_fired).toEqual([
        { rule: 1, tool: 'list', fault: 'delay', repeats: 2 },
        { rule: 2, tool: 'put', fault: 'timeout_after_mutation', repeats: 0 },
      ]);
      expect(markdown).toContain('### Faults that never fired (1): the scenario tested less than it says');
      expect(markdown).toContain(
        '- `only` head: fault 2 (timeout_after_mutation on put) applied to no call in any of 2 repeats',
      );
      const written = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
      expect(validateReport(written, 'report.json').cases[0].head?.faults_fired).toHaveLength(2);
    });
  },
);
