// Attack: a head whose twin SQL cannot run. Every write would fail inside the harness on both sides
// alike, every case would read "unchanged" and the gate would PASS. A statement that does not
// prepare is refused before any episode; a SQL error only the run can meet (a constraint the twin
// does not declare) makes the case incomplete with the database's message, never PASS, and a head
// that alone meets one cannot hide a failure behind it. An error the twin lists under `errors:`
// (raised on purpose by a function of the schema) is the tool's answer, graded as usual.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { GradedEpisode } from '../../src/model/episode.js';
import type { Report } from '../../src/model/report.js';
import { runCompare } from '../../src/run/pipeline.js';
import { agentSharedDir } from '../helpers/agent-dir.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { CALL_TOOL, putTwin, stategate, writeSuite } from './suite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of [...dirs, marks]) rmSync(d, { recursive: true, force: true });
});

/** An agent that leaves a mark that it ran, puts one value, and says it succeeded whatever happened. */
const AGENT = `${CALL_TOOL}
import { writeFileSync } from 'node:fs';
writeFileSync(process.env.MARK, '');
const put = await call('put', { k: process.env.KEY ?? 'a', v: 'b' });
done({ put: put.status });
`;

// The agent's mark goes where it may write whatever user it runs as (not its checkout: as root it
// runs as an unprivileged user).
const marks = agentSharedDir('sg-broken-twin-');
const markOf = new Map<string, string>();

function suite(sql: string, key: string, engine: 'embedded' | 'postgres' = 'embedded'): string {
  const marker = join(marks, `ran-${markOf.size}`);
  const dir = writeSuite({
    twin: putTwin(sql),
    agentFiles: { 'agent.mjs': AGENT },
    agent: `  command: node agent.mjs\n  env: { KEY: ${key}, MARK: ${marker} }\n  timeout: 60s`,
    expect: '  - id: reads\n    query: SELECT count(*) FROM kv\n    gte: 1\n',
    engine,
  });
  dirs.push(dir);
  markOf.set(dir, marker);
  return dir;
}

describe('a twin whose SQL names a missing column', () => {
  it('makes compare exit 1 with the file:line before any episode runs', { timeout: 300_000 }, async () => {
    const dir = suite('INSERT INTO kv (k, vv) VALUES (:k, :v) RETURNING k', 'a');
    const res = await stategate(dir, ['compare', '--base', '.', '--head', '.', '--engine', 'embedded']);
    expect(res.code).toBe(1);
    // twin.yaml line 10 is the sql line; the problem names the column and what to do.
    expect(res.stderr).toMatch(/^twin\.yaml:10:\d+: tool put: .*column "vv" .*does not exist/m);
    expect(res.stderr).toMatch(/the suite cannot run: fix this statement/);
    expect(res.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(markOf.get(dir)!)).toBe(false);
    expect(existsSync(join(dir, '.stategate', 'episodes.jsonl'))).toBe(false);
    expect(existsSync(join(dir, '.stategate', 'report.json'))).toBe(false);
  });

  it('reports a refused statement at every place it stands, though the server is asked once', {
    timeout: 300_000,
  }, async () => {
    // The same broken expectation in two scenarios: one answer, two file:line problems.
    const dir = writeSuite({
      twin: putTwin('INSERT INTO kv (k, v) VALUES (:k, :v) RETURNING k'),
      agentFiles: { 'agent.mjs': AGENT },
      agent: '  command: node agent.mjs\n  timeout: 60s',
      expect: '  - id: reads\n    query: SELECT count(vv) FROM kv\n    gte: 1\n',
      scenarios: ['first', 'second'],
      engine: 'embedded',
    });
    dirs.push(dir);
    const res = await stategate(dir, ['run', '--dir', '.', '--engine', 'embedded']);
    expect(res.code).toBe(1);
    for (const id of ['first', 'second'])
      expect(res.stderr).toMatch(
        new RegExp(`^scenarios/${id}\\.yaml:\\d+:\\d+: .*column "vv" does not exist`, 'm'),
      );
  });

  it('makes run exit 1 the same way', { timeout: 300_000 }, async () => {
    const dir = suite('INSERT INTO kv (k, vv) VALUES (:k, :v) RETURNING k', 'a');
    const res = await stategate(dir, ['run', '--engine', 'embedded']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^twin\.yaml:10:\d+: tool put: .*"vv"/m);
    expect(existsSync(markOf.get(dir)!)).toBe(false);
  });
});

describe('a SQL error only the run meets (a constraint the twin does not declare)', () => {
  // The fixture holds key 'seed': putting it again violates the primary key, which no precondition
  // of the twin declares. Both sides meet it alike, so without the check every case is unchanged.
  it('makes `stategate run` show the database error instead of blaming the agent', {
    timeout: 300_000,
  }, async () => {
    const dir = suite('INSERT INTO kv (k, v) VALUES (:k, :v) RETURNING k', 'seed');
    const res = await stategate(dir, ['run', '--engine', 'embedded', '--fail-on', 'warn']);
    // No episode could be graded: the run could not run, and says why.
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/none of the \d+ episodes completed/);
    expect(res.stderr).toMatch(/duplicate key value violates unique constraint "kv_pkey"/);
    expect(res.stderr).toMatch(/fix the twin's SQL/);
    const report = JSON.parse(readFileSync(join(dir, '.stategate', 'report.json'), 'utf8'));
    expect(report.verdict).not.toBe('PASS');
    expect(report.cases[0].class).toBe('incomplete');
  });

  for (const engine of ['embedded', 'postgres'] as const) {
    it(`on the ${engine} engine: compare calls the case incomplete with the SQL error in report.json and report.md`, {
      timeout: 300_000,
    }, async () => {
      const dir = suite('INSERT INTO kv (k, v) VALUES (:k, :v) RETURNING k', 'seed', engine);
      const out = join(dir, 'out');
      // Nothing completed on either side: the run could not run, and its report is still written.
      await expect(
        runCompare({
          base: dir,
          head: dir,
          repo: dir,
          out,
          repeats: 2,
          engine,
          databaseUrl: engine === 'postgres' ? TEST_DATABASE_URL : undefined,
        }),
      ).rejects.toThrow(/none of the 4 episodes completed.*duplicate key value violates unique constraint/s);
      const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as Report;
      const markdown = readFileSync(join(out, 'report.md'), 'utf8');
      expect(report.verdict).not.toBe('PASS');
      expect(report.cases).toHaveLength(1);
      const only = report.cases[0];
      expect(only.class).toBe('incomplete');
      expect(only.reason).toMatch(/duplicate key value violates unique constraint "kv_pkey"/);
      expect(markdown).toMatch(/duplicate key value violates unique constraint/);
      expect(readFileSync(join(out, 'report.md'), 'utf8')).toBe(markdown);
      // Every episode says which call the harness failed; the agent still saw an error answer.
      const episodes = readFileSync(join(out, 'episodes.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as GradedEpisode);
      expect(episodes).toHaveLength(4);
      for (const g of episodes) {
        expect(g.record.infraError?.stage).toBe('tool');
        expect(g.record.calls[0].status).toBe(409);
        expect(g.record.calls[0].harnessError).toMatch(
          /^CONSTRAINT_VIOLATION \(SQLSTATE 23505\): duplicate key/,
        );
      }
    });
  }

  it('blocks a head that alone makes the twin fail on its values, rather than warning incomplete', {
    timeout: 300_000,
  }, async () => {
    // The attack on the rule above: a head that would fail puts a key it knows collides, so that
    // its case reads "incomplete" (a warning) instead of a failure. The base never meets the error.
    const base = suite('INSERT INTO kv (k, v) VALUES (:k, :v) RETURNING k', 'fresh');
    const head = suite('INSERT INTO kv (k, v) VALUES (:k, :v) RETURNING k', 'seed');
    const { report } = await runCompare({
      base,
      head,
      repo: head,
      out: join(head, 'out'),
      engine: 'embedded',
    });
    expect(report.cases[0].class).toBe('new-critical-failure');
    expect(report.cases[0].reason).toMatch(/made the twin's SQL fail inside the harness/);
    expect(report.cases[0].reason).toMatch(/duplicate key value violates unique constraint/);
    expect(report.verdict).toBe('BLOCK');
  });

  it('leaves a declared not_found an ordinary answer the agent is graded on', {
    timeout: 300_000,
  }, async () => {
    const dir = suite('UPDATE kv SET v = :v WHERE k = :k RETURNING k', 'missing');
    const declared = readFileSync(join(dir, 'twin.yaml'), 'utf8').replace(
      '    returns: one\n',
      '    returns: one\n    not_found: { status: 404, code: NO_KEY }\n',
    );
    writeFileSync(join(dir, 'twin.yaml'), declared);
    const { report } = await runCompare({
      base: dir,
      head: dir,
      repo: dir,
      out: join(dir, 'out'),
      engine: 'embedded',
    });
    expect(report.cases[0].class).toBe('unchanged');
    expect(report.verdict).toBe('PASS');
  });

  it('leaves an error a function raises with a SQLSTATE listed under errors an ordinary answer; unlisted, the case is incomplete', {
    timeout: 300_000,
  }, async () => {
    const schema = `CREATE TABLE kv (k text PRIMARY KEY, v text NOT NULL);
CREATE FUNCTION put_new(p_k text, p_v text) RETURNS TABLE (k text) LANGUAGE plpgsql AS $fn$
DECLARE n integer;
BEGIN
  SELECT count(*) INTO n FROM kv WHERE kv.k = p_k;
  IF n > 0 THEN
    RAISE EXCEPTION USING ERRCODE = 'SG409', MESSAGE = format('key %s is taken (%s row)', p_k, n);
  END IF;
  RETURN QUERY INSERT INTO kv VALUES (p_k, p_v) RETURNING kv.k;
END $fn$;
`;
    const run = async (errors: string) => {
      const marker = join(marks, `ran-${markOf.size}`);
      const dir = writeSuite({
        schema,
        twin: putTwin('SELECT k FROM put_new(:k, :v)') + errors,
        agentFiles: { 'agent.mjs': AGENT },
        // 'seed' is a fixture row: the function refuses it on both sides.
        agent: `  command: node agent.mjs\n  env: { KEY: seed, MARK: ${marker} }\n  timeout: 60s`,
        expect: '  - id: reads\n    query: SELECT count(*) FROM kv\n    gte: 1\n',
      });
      dirs.push(dir);
      markOf.set(dir, marker);
      try {
        return (
          await runCompare({ base: dir, head: dir, repo: dir, out: join(dir, 'out'), engine: 'embedded' })
        ).report;
      } catch (err) {
        // A run in which nothing completed could not run; its report is still on disk.
        if ((err as Error).name !== 'NothingCompletedError') throw err;
        return JSON.parse(readFileSync(join(dir, 'out', 'report.json'), 'utf8')) as Report;
      }
    };
    const declared = await run('    errors:\n      SG409: { status: 409, code: KEY_TAKEN }\n');
    expect(declared.cases[0].class).toBe('unchanged');
    expect(declared.verdict).toBe('PASS');
    const undeclared = await run('');
    expect(undeclared.cases[0].class).toBe('incomplete');
    expect(undeclared.cases[0].reason).toMatch(/key seed is taken \(1 row\)/);
  });
});
