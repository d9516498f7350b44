// A suite that tries to leave its database from inside: server programs, server files, server
// settings, new (super)user roles, untrusted extensions, from its schema, fixtures, scenario state
// and twins. Suite SQL runs as an unprivileged role that owns only the run's databases, so each
// attempt is refused with the file and line and why, on every engine, and the run leaves no role
// or database behind.
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectSqlStatements, loadSuite } from '../../src/config/load.js';
import { applyScenarioState } from '../../src/sandbox/apply.js';
import type { Engine, Sandbox, Template } from '../../src/sandbox/types.js';
import { engines, onServer, sharedEmbeddedServer, TEST_DATABASE_URL } from '../helpers/engines.js';
import { putTwin } from './suite.js';

const WHY = 'suite SQL runs as an unprivileged role';
const work = mkdtempSync(join(tmpdir(), 'sg-suite-sql-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A name no run would use, so finding it afterwards means the attack worked. */
const evilRole = `suite_sql_attack_${randomBytes(4).toString('hex')}`;
/** A file a server-side program would create. */
const marker = join(work, 'program-ran');

/** Schema files that each try one thing the suite role may not do; `line` is where they try it. */
const SCHEMA_ATTACKS: { what: string; sql: string; line: number; refused: RegExp }[] = [
  {
    what: 'COPY TO PROGRAM',
    sql: `CREATE TABLE t (x int);\n\nCOPY (SELECT 1) TO PROGRAM 'touch ${marker}';`,
    line: 3,
    refused: /(?=.*pg_execute_server_program)(?=.*COPY to or from an external program)/,
  },
  {
    what: 'COPY FROM PROGRAM',
    sql: `CREATE TABLE t (x text);\nCOPY t FROM PROGRAM 'touch ${marker}; hostname';`,
    line: 2,
    refused: /(?=.*pg_execute_server_program)(?=.*COPY to or from an external program)/,
  },
  {
    what: 'pg_read_file',
    sql: "CREATE TABLE t (x text);\nINSERT INTO t VALUES ('ok');\nINSERT INTO t SELECT pg_read_file('/etc/hostname');",
    line: 3,
    refused: /permission denied for function pg_read_file/,
  },
  {
    // Alone in its file: ALTER SYSTEM refuses to run inside the implicit transaction of several statements.
    what: 'ALTER SYSTEM',
    sql: "ALTER SYSTEM SET log_min_messages = 'panic'",
    line: 1,
    refused:
      /permission denied to set parameter "log_min_messages"|must be superuser to execute ALTER SYSTEM/,
  },
  {
    what: 'CREATE ROLE ... SUPERUSER',
    sql: `CREATE TABLE t (x int);\nCREATE ROLE ${evilRole} SUPERUSER LOGIN PASSWORD 'x';`,
    line: 2,
    refused: /must be superuser to create superusers|permission denied to create role/,
  },
  {
    what: 'COPY TO a server file',
    sql: `CREATE TABLE t (x int);\nCOPY t TO '${join(work, 'copied')}';`,
    line: 2,
    refused: /(?=.*pg_write_server_files)(?=.*COPY to a file)/,
  },
];

/** The admin URL of the server an engine runs on (to look at what is left on it). */
async function serverUrl(name: string): Promise<string> {
  return name === 'postgres' ? TEST_DATABASE_URL : (await sharedEmbeddedServer()).adminUrl;
}

const superusers = (url: string) =>
  onServer(url, async (c) =>
    (await c.query('SELECT rolname FROM pg_roles WHERE rolsuper ORDER BY 1')).rows.map((r) => r.rolname),
  );

/** A suite on disk whose twin and scenario state try to read server files. */
function writeSuite(): string {
  const dir = mkdtempSync(join(work, 'suite-'));
  mkdirSync(join(dir, 'db'));
  mkdirSync(join(dir, 'scenarios'));
  writeFileSync(join(dir, 'db', 'schema.sql'), 'CREATE TABLE kv (k text NOT NULL, v text NOT NULL);\n');
  writeFileSync(join(dir, 'db', 'fixtures.yaml'), 'kv:\n  - { k: seed, v: fixture }\n');
  writeFileSync(
    join(dir, 'twin.yaml'),
    `tools:
  peek:
    description: Reads a file of the database server.
    risk: read
    input: { type: object, additionalProperties: false }
    sql: SELECT pg_read_file('/etc/hostname') AS host
    returns: one
${putTwin().slice('tools:\n'.length)}`,
  );
  writeFileSync(
    join(dir, 'scenarios', 'leak.yaml'),
    `id: leak
input:
  message: leak
state:
  sql:
    - INSERT INTO kv (k, v) VALUES ('a', 'b')
    - SELECT lo_import('/etc/hostname')
expect:
  - id: seeded
    query: SELECT count(*) FROM kv
    equals: 2
`,
  );
  writeFileSync(
    join(dir, 'agent.mjs'),
    `const res = await fetch(process.env.STATEGATE_TOOLS_URL + '/tools/peek', {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}',
});
const body = await res.text();
process.stdout.write(JSON.stringify({ reply: body, outcome: 'SUCCESS' }) + '\\n');
`,
  );
  writeFileSync(
    join(dir, 'stategate.yml'),
    `version: 1
agent:
  command: node agent.mjs
  timeout: 60s
database:
  engine: postgres
  schema: [db/schema.sql]
  fixtures: [db/fixtures.yaml]
twins: [twin.yaml]
scenarios: [scenarios/*.yaml]
repeats: 1
`,
  );
  return dir;
}

/** 1-based line of the first occurrence of `needle` in a file. */
function lineOf(file: string, needle: string): number {
  const text = readFileSync(file, 'utf8');
  return text.slice(0, text.indexOf(needle)).split('\n').length;
}

describe.each(engines())('suite SQL runs unprivileged: $name engine', ({ name, create }) => {
  let engine: Engine;
  let template: Template;
  let url: string;
  let before: string[];
  const open: Sandbox[] = [];

  beforeAll(async () => {
    url = await serverUrl(name);
    before = await superusers(url);
    engine = await create();
    template = await engine.buildTemplate({
      schema: [{ file: 'db/schema.sql', sql: 'CREATE TABLE kv (k text NOT NULL, v text NOT NULL);' }],
      fixtures: [{ file: 'db/fixtures.yaml', rows: { kv: [{ k: 'seed', v: 'fixture' }] } }],
    });
  }, 180_000);
  afterAll(async () => {
    await Promise.all(open.map((s) => s.dispose()));
    await engine?.close();
  }, 180_000);

  const clone = async (label: string) => {
    const s = await template.clone(label);
    open.push(s);
    return s;
  };

  it('logs every session into the database as a role of the run with no privilege outside it', async () => {
    const s = await clone('whoami');
    const me = await s.query(
      `SELECT current_user AS role, r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolreplication, r.rolbypassrls,
              pg_get_userbyid(d.datdba) AS db_owner,
              (SELECT count(*)::int FROM pg_auth_members m WHERE m.member = r.oid) AS memberships
         FROM pg_roles r, pg_database d WHERE r.rolname = current_user AND d.datname = current_database()`,
    );
    const row = me.rows[0];
    expect(row.role).toMatch(new RegExp(`^${engine.runPrefix}_o_\\d+$`));
    expect(row).toMatchObject({
      rolsuper: false,
      rolcreaterole: false,
      rolcreatedb: false,
      rolreplication: false,
      rolbypassrls: false,
      db_owner: row.role,
      memberships: 0,
    });
    // No way back up: the session logged in as the role, so there is no admin to RESET ROLE to.
    await expect(s.query('RESET ROLE; SET ROLE postgres')).rejects.toThrow(/permission denied to set role/);
  });

  it.each(SCHEMA_ATTACKS)(
    'refuses $what in a schema file with the file, line and why',
    async ({ sql, line, refused }) => {
      const attempt = engine.buildTemplate({ schema: [{ file: 'db/schema.sql', sql }], fixtures: [] });
      const error = await attempt.then(
        () => null,
        (e: Error) => e.message,
      );
      expect(error).toMatch(new RegExp(`^db/schema\\.sql:${line}:\\d+: `));
      expect(error).toMatch(refused);
      expect(error).toContain(WHY);
      expect(existsSync(marker)).toBe(false);
    },
    120_000,
  );

  it('refuses dblink, installed or not', async () => {
    const sql =
      "CREATE TABLE t (x int);\nCREATE EXTENSION dblink;\nSELECT dblink_connect('dbname=postgres');";
    const error = await engine.buildTemplate({ schema: [{ file: 'db/ext.sql', sql }], fixtures: [] }).then(
      () => null,
      (e: Error) => e.message,
    );
    const available = await onServer(url, async (c) =>
      Boolean((await c.query("SELECT 1 FROM pg_available_extensions WHERE name = 'dblink'")).rowCount),
    );
    expect(error).toMatch(/^db\/ext\.sql:2:\d+: /);
    if (available) {
      expect(error).toMatch(/permission denied to create extension "dblink"/);
      expect(error).toContain(WHY);
    } else {
      expect(error).toMatch(/extension "dblink" is not available|could not open extension control file/);
    }
  }, 120_000);

  it('refuses server files in SQL fixtures, and server programs in triggers that fixture rows fire', async () => {
    const sqlFixture = await engine
      .buildTemplate({
        schema: [{ file: 'db/schema.sql', sql: 'CREATE TABLE t (x text);' }],
        fixtures: [{ file: 'db/seed.sql', sql: "INSERT INTO t VALUES ('a');\n\nSELECT pg_ls_dir('.');" }],
      })
      .then(
        () => null,
        (e: Error) => e.message,
      );
    expect(sqlFixture).toMatch(/^db\/seed\.sql:3:\d+: permission denied for function pg_ls_dir/);
    expect(sqlFixture).toContain(WHY);

    const trigger = `CREATE TABLE t (x text);
CREATE FUNCTION run_it() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN EXECUTE 'COPY (SELECT 1) TO PROGRAM ''touch ${marker}'''; RETURN NEW; END $$;
CREATE TRIGGER t_run BEFORE INSERT ON t FOR EACH ROW EXECUTE PROCEDURE run_it();`;
    const rows = await engine
      .buildTemplate({
        schema: [{ file: 'db/schema.sql', sql: trigger }],
        fixtures: [{ file: 'db/rows.yaml', rows: { t: [{ x: 'a' }] } }],
      })
      .then(
        () => null,
        (e: Error) => e.message,
      );
    expect(rows).toMatch(/^db\/rows\.yaml: table t: row 1: .*COPY to or from an external program/);
    expect(rows).toContain(WHY);
    expect(existsSync(marker)).toBe(false);
  }, 180_000);

  it('refuses server files to scenario state and twins, when prepared and when run', async () => {
    const s = await clone('state');
    await expect(
      applyScenarioState(s, { rows: {}, sql: ["SELECT lo_import('/etc/hostname')"] }, template.tables),
    ).rejects.toThrow(
      /^state\.sql\[0\]: permission denied for function lo_import in: .* — suite SQL runs as an unprivileged role/,
    );
    await expect(
      s.transaction((tx) => tx.query("SELECT pg_read_file('/etc/hostname') AS h")),
    ).rejects.toThrow('permission denied for function pg_read_file');
    // Preparing checks privileges too, without running anything, with and without parameters.
    expect(await template.prepare("SELECT pg_read_file('/etc/hostname') AS h")).toMatch(
      /^permission denied for function pg_read_file — suite SQL runs as an unprivileged role/,
    );
    expect(await template.prepare('INSERT INTO kv (k, v) SELECT $1, pg_read_file($1)', 1)).toMatch(
      /^permission denied for function pg_read_file/,
    );
    expect(await template.prepare('SELECT k FROM kv WHERE v = $1', 1)).toBeNull();

    // As `stategate validate` reports them: the twin's and the scenario's own file and line.
    const dir = writeSuite();
    const loaded = await loadSuite(join(dir, 'stategate.yml'), { env: {} });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const t = await engine.buildTemplate(loaded.suite.template);
    const problems: string[] = [];
    for (const st of collectSqlStatements(loaded.suite)) {
      const error = await t.prepare(st.sql, st.paramCount);
      if (error) problems.push(`${st.file}:${st.line}: ${st.what}: ${error}`);
    }
    expect(problems).toHaveLength(2);
    const twinLine = lineOf(join(dir, 'twin.yaml'), 'pg_read_file');
    const stateLine = lineOf(join(dir, 'scenarios', 'leak.yaml'), 'lo_import');
    expect(problems[0]).toMatch(
      new RegExp(`twin\\.yaml:${twinLine}: tool peek: permission denied for function pg_read_file — ${WHY}`),
    );
    expect(problems[1]).toMatch(
      new RegExp(
        `leak\\.yaml:${stateLine}: scenario leak, .*permission denied for function lo_import — ${WHY}`,
      ),
    );
  }, 180_000);

  it('cannot write from an expectation query, even by switching its transaction to read-write', async () => {
    const s = await clone('expect-writes');
    await s.markInitial();
    const attempts = [
      "SET TRANSACTION READ WRITE; UPDATE kv SET v = 'forged' RETURNING v",
      "UPDATE kv SET v = 'forged' RETURNING v",
    ];
    for (const sql of attempts) {
      await expect(s.readOnly(sql)).rejects.toThrow(
        /read-write mode must be set before any query|read-only transaction/,
      );
    }
    expect((await s.readOnly('SELECT v FROM kv')).rows).toEqual([{ v: 'fixture' }]);
    expect(Object.keys((await s.captureDiff()).tables)).toEqual([]);
  });

  it('cannot erase, forge or bypass what the change log recorded', async () => {
    const s = await clone('log-writes');
    await s.markInitial();
    const { changes } = await s.transaction(async (tx) => {
      await tx.query("DELETE FROM kv WHERE k = 'seed'");
      // Each attempt in a savepoint, so the transaction (and its log rows) survives the refusal.
      for (const sql of [
        'DELETE FROM stategate.changes WHERE xid = txid_current()',
        'TRUNCATE stategate.changes',
        "UPDATE stategate.changes SET op = 'I'",
        'INSERT INTO stategate.changes (tbl, op, new) VALUES (\'kv\', \'I\', \'{"k":"seed","v":"fixture"}\')',
        'DROP SCHEMA stategate CASCADE',
        'ALTER TABLE stategate.changes OWNER TO CURRENT_USER',
        // Attaching the capture function to a table of its own, under kv's name, would forge rows.
        "CREATE TABLE decoy (k text, v text); CREATE TRIGGER f AFTER INSERT ON decoy FOR EACH ROW EXECUTE PROCEDURE stategate.capture('kv')",
      ]) {
        await tx.query('SAVEPOINT attempt');
        await expect(tx.query(sql), sql).rejects.toThrow(/permission denied|must be owner/);
        await tx.query('ROLLBACK TO SAVEPOINT attempt');
      }
    });
    expect(changes.map((c) => c.op)).toEqual(['delete']);
    const diff = await s.captureDiff();
    expect(Object.keys(diff.tables)).toEqual(['kv']);
    expect(diff.tables.kv.deleted).toHaveLength(1);
  });

  it('cannot keep its databases from being dropped by marking them templates', async () => {
    const mark =
      "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I IS_TEMPLATE true', current_database()); END $$";
    const t = await engine.buildTemplate({
      schema: [{ file: 'db/schema.sql', sql: `CREATE TABLE t (x int);\n${mark};` }],
      fixtures: [],
    });
    const s = await t.clone('marked');
    await s.transaction((tx) => tx.query(mark));
    const marked = await onServer(url, async (c) =>
      (
        await c.query(
          'SELECT datname FROM pg_database WHERE datistemplate AND datname = ANY($1) ORDER BY 1',
          [[t.name, s.name]],
        )
      ).rows.map((r) => r.datname),
    );
    expect(marked).toEqual([t.name, s.name].sort());
    // Dropped now, and the template with the rest at close (checked below).
    await s.dispose();
    const left = await onServer(
      url,
      async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [s.name])).rowCount,
    );
    expect(left).toBe(0);
  }, 180_000);

  it('leaves no role or database of the run, and no new superuser, once closed', async () => {
    await Promise.all(open.splice(0).map((s) => s.dispose()));
    await engine.close();
    const left = await onServer(url, async (c) =>
      (
        await c.query(
          `SELECT datname AS name FROM pg_database WHERE starts_with(datname, $1)
           UNION ALL SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1) OR rolname = $2`,
          [`${engine.runPrefix}_`, evilRole],
        )
      ).rows.map((r) => r.name),
    );
    expect(left).toEqual([]);
    expect(await superusers(url)).toEqual(before);
  }, 180_000);
});

describe('a twin that reads a server file, through a whole run', () => {
  it('never gets the file into a reply, a record or a report', async () => {
    // A world-readable file of the server's machine with a line no report would otherwise hold.
    const secret = 'PRETTY_NAME=';
    expect(readFileSync('/etc/os-release', 'utf8')).toContain(secret);
    const dir = writeSuite();
    const twin = join(dir, 'twin.yaml');
    writeFileSync(twin, readFileSync(twin, 'utf8').replace('/etc/hostname', '/etc/os-release'));
    // Without the state that validate refuses: the run must reach the agent's tool call.
    const scenario = join(dir, 'scenarios', 'leak.yaml');
    writeFileSync(
      scenario,
      readFileSync(scenario, 'utf8').replace("    - SELECT lo_import('/etc/hostname')\n", ''),
    );
    const out = join(dir, 'out');
    const { runCompare } = await import('../../src/run/pipeline.js');
    const error = await runCompare({
      base: dir,
      head: dir,
      repo: dir,
      out,
      engine: 'postgres',
      databaseUrl: TEST_DATABASE_URL,
    }).then(
      () => '',
      (e: Error) => e.message,
    );
    // Whether the run refuses the twin up front or records the failed call, the file stays on the server.
    const written = existsSync(out) ? readdirSync(out).map((f) => readFileSync(join(out, f), 'utf8')) : [];
    const everything = [error, ...written].join('\n');
    expect(everything).toContain('permission denied for function pg_read_file');
    expect(everything).not.toContain(secret);
  }, 300_000);
});
