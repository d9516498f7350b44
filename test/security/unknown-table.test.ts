// Attack: a head whose guards name tables and columns the template does not have. A
// `forbid_changes: {table: patient}` when the table is `patients` sees no change of `patient` and
// passes forever, whatever the agent does to `patients`; `only_changes`, `changes` and its `where`
// and `state.rows` would take any name too. Every name is checked against the template: `validate`
// and every run refuse the suite at the name's file:line, with the table it probably meant, on
// every engine, before any episode.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentSharedDir } from '../helpers/agent-dir.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { CALL_TOOL, stategate, writeSuite } from './suite.js';

const dirs: string[] = [];
const marks = agentSharedDir('sg-unknown-table-');
afterAll(() => {
  for (const d of [...dirs, marks]) rmSync(d, { recursive: true, force: true });
});

const SCHEMA = `CREATE TABLE kv (k text PRIMARY KEY, v text NOT NULL);
CREATE TABLE patients (id serial PRIMARY KEY, name text NOT NULL, dob date);
`;
const TWIN = `tools:
  forget:
    description: Delete every patient.
    risk: write
    input: { type: object, additionalProperties: false }
    sql: DELETE FROM patients
    returns: none
`;
/** The agent deletes every patient: the guard on "patient" must not let that pass. */
const AGENT = `${CALL_TOOL}
import { writeFileSync } from 'node:fs';
writeFileSync(process.env.MARK, '');
await call('forget', {});
done('done');
`;

// Line numbers below are the lines of this file's names.
const SCENARIO = `id: guard
input:
  message: forget everyone
state:
  rows:
    patients:
      - { id: 1, name: Ada, birth_date: 1990-01-01 }
    patient_notes:
      - { id: 1 }
expect:
  - id: no-patient-deleted
    critical: true
    forbid_changes: { table: patient, ops: [delete] }
  - id: only-kv
    only_changes: [kv, patiens]
  - id: one-deleted
    changes: { table: patients, deleted: 1, where: { nme: Ada } }
  - id: none-in-kvs
    changes: { table: kvs, inserted: 0 }
`;

function suite(engine: 'embedded' | 'postgres', mark: string): string {
  const dir = writeSuite({
    twin: TWIN,
    agentFiles: { 'agent.mjs': AGENT },
    agent: `  command: node agent.mjs\n  env: { MARK: ${mark} }\n  timeout: 30s`,
    expect: '',
    scenarios: [],
    engine,
    schema: SCHEMA,
  });
  writeFileSync(join(dir, 'scenarios', 'guard.yaml'), SCENARIO);
  dirs.push(dir);
  return dir;
}

const EXPECTED = [
  /^scenarios\/guard\.yaml:7:29: state\.rows\.patients\[0\]\.birth_date: unknown column 'birth_date' of table 'patients': expected one of id, name, dob/m,
  /^scenarios\/guard\.yaml:8:5: state\.rows\.patient_notes: unknown table 'patient_notes': expected a table of the template \(kv, patients\)/m,
  /^scenarios\/guard\.yaml:13:30: expect\[0\]\.forbid_changes\.table: unknown table 'patient': expected a table of the template \(kv, patients\); did you mean 'patients'\?/m,
  /^scenarios\/guard\.yaml:15:24: expect\[1\]\.only_changes\[1\]: unknown table 'patiens': .*; did you mean 'patients'\?/m,
  /^scenarios\/guard\.yaml:17:54: expect\[2\]\.changes\.where\.nme: unknown column 'nme' of table 'patients': .*; did you mean 'name'\?/m,
  /^scenarios\/guard\.yaml:19:23: expect\[3\]\.changes\.table: unknown table 'kvs': .*; did you mean 'kv'\?/m,
];

describe.each(['postgres', 'embedded'] as const)(
  'on the %s engine, names the template does not have',
  (engine) => {
    const env = { STATEGATE_DATABASE_URL: TEST_DATABASE_URL };

    it('are problems `validate` reports at their file:line, with the name meant', {
      timeout: 300_000,
    }, async () => {
      const dir = suite(engine, join(marks, `validate-${engine}`));
      const res = await stategate(dir, ['validate', '--engine', engine], env);
      expect(res.code).toBe(1);
      for (const line of EXPECTED) expect(res.stderr).toMatch(line);
      expect(res.stderr).toMatch(/^6 problems found\.$/m);
      expect(res.stderr).not.toMatch(/\n\s+at /);
    });

    it('refuse the run before any episode', { timeout: 300_000 }, async () => {
      const mark = join(marks, `run-${engine}`);
      const dir = suite(engine, mark);
      const res = await stategate(dir, ['compare', '--base', '.', '--head', '.', '--engine', engine], env);
      expect(res.code).toBe(1);
      for (const line of EXPECTED) expect(res.stderr).toMatch(line);
      expect(res.stderr).toMatch(/the suite cannot run/);
      expect(existsSync(mark)).toBe(false);
      expect(existsSync(join(dir, '.stategate', 'report.json'))).toBe(false);
    });
  },
);
