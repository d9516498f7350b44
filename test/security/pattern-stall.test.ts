// Attack: a head's scenario whose `reply_matches` backtracks exponentially (`^(a+)+$`) and an agent
// whose reply is 45 a's and a bang. With a backtracking engine grading that reply blocks the
// harness's event loop for minutes (no timeout fires, the gateway stops answering); suite patterns
// are matched with RE2 semantics, so the run grades it and ends like any failing case. A pattern
// RE2 cannot match in linear time (a backreference, a lookahead) is refused before any episode.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentSharedDir } from '../helpers/agent-dir.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { stategate, writeSuite } from './suite.js';

const dirs: string[] = [];
const marks = agentSharedDir('sg-pattern-stall-');
afterAll(() => {
  for (const d of [...dirs, marks]) rmSync(d, { recursive: true, force: true });
});

const TWIN = `tools:
  list:
    description: Every key.
    risk: read
    sql: SELECT k FROM kv ORDER BY k
    returns: many
`;

/** An agent that leaves a mark that it ran and replies with 45 a's and a bang. */
const AGENT = `import { writeFileSync } from 'node:fs';
writeFileSync(process.env.MARK, '');
process.stdout.write(JSON.stringify({ reply: 'a'.repeat(45) + '!', outcome: 'SUCCESS' }) + '\\n');
`;

function suite(pattern: string, mark: string): string {
  const dir = writeSuite({
    twin: TWIN,
    agentFiles: { 'agent.mjs': AGENT },
    agent: `  command: node agent.mjs\n  env: { MARK: ${mark} }\n  timeout: 30s`,
    expect: `  - id: all-a\n    critical: true\n    reply_matches: ${JSON.stringify(pattern)}\n`,
    engine: 'postgres',
  });
  dirs.push(dir);
  return dir;
}

const ENV = { STATEGATE_DATABASE_URL: TEST_DATABASE_URL };
// Far above what the run takes, far below the minutes a backtracking match needs.
const KILL_AFTER_MS = 120_000;

describe('a suite pattern that backtracks exponentially', () => {
  it('is graded: the reply fails it and the run ends with the verdict', { timeout: 200_000 }, async () => {
    const mark = join(marks, 'ran');
    const dir = suite('^(a+)+$', mark);
    const res = await stategate(
      dir,
      ['run', '--engine', 'postgres', '--fail-on', 'block'],
      ENV,
      KILL_AFTER_MS,
    );
    expect(res.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(mark)).toBe(true);
    // Killed (code null) on a backtracking engine; a failed critical expectation blocks here.
    expect(res.code).toBe(2);
    expect(res.stdout).toMatch(/all-a/);
    expect(res.stdout).toMatch(/expected the reply to match/);
  });
});

describe('a pattern RE2 cannot match in linear time', () => {
  for (const [what, pattern] of [
    ['a backreference', '^(a+)\\1$'],
    ['a lookahead', '^(?=a)a+$'],
  ] as const) {
    it(`(${what}) is refused at its file:line before any episode`, { timeout: 200_000 }, async () => {
      const mark = join(marks, `ran-${what.replace(/ /g, '-')}`);
      const dir = suite(pattern, mark);
      const res = await stategate(dir, ['run', '--engine', 'postgres'], ENV, KILL_AFTER_MS);
      expect(res.code).toBe(1);
      // scenarios/only.yaml: line 7 is `reply_matches`, its value at column 20; the field is named.
      expect(res.stderr).toMatch(
        /^scenarios\/only\.yaml:7:20: expect\[0\]\.reply_matches: not a valid regular expression: .*cannot be matched in linear time.*RE2 syntax/m,
      );
      expect(existsSync(mark)).toBe(false);
      const validate = await stategate(dir, ['validate', '--engine', 'postgres'], ENV, KILL_AFTER_MS);
      expect(validate.code).toBe(1);
      expect(validate.stderr).toMatch(/^scenarios\/only\.yaml:7:20: .*linear time/m);
    });
  }
});
