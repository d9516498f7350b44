// A scenario's state.sql runs as the suite role and may create functions. A SECURITY DEFINER one
// would run as the suite role for whoever calls it: the agent's own database role (database.expose)
// is refused it like the template's, and may still call the state's other functions.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyScenarioState } from '../../src/sandbox/apply.js';
import type { Engine, Template } from '../../src/sandbox/types.js';
import { engines } from '../helpers/engines.js';

const SCHEMA = 'CREATE TABLE orders (id text PRIMARY KEY, status text NOT NULL);';
const STATE_SQL = [
  `INSERT INTO orders VALUES ('O-1', 'delivered')`,
  `CREATE FUNCTION run_as_owner() RETURNS text LANGUAGE sql SECURITY DEFINER AS $$ SELECT current_user::text $$`,
  `CREATE FUNCTION run_as_caller() RETURNS text LANGUAGE sql AS $$ SELECT current_user::text $$`,
];

describe.each(engines())('state.sql SECURITY DEFINER functions on $name', (testEngine) => {
  let engine: Engine;
  let template: Template;
  beforeAll(async () => {
    engine = await testEngine.create();
    template = await engine.buildTemplate({ schema: [{ file: 'db/schema.sql', sql: SCHEMA }], fixtures: [] });
  }, 300_000);
  afterAll(async () => {
    await engine?.close();
  }, 300_000);

  it("are refused to the agent's database role, which still runs the state's other functions", async () => {
    const sandbox = await template.clone('state-definer');
    try {
      await applyScenarioState(sandbox, { rows: {}, sql: STATE_SQL }, template.tables);
      const agent = new pg.Client({ connectionString: await sandbox.exposeUrl() });
      await agent.connect();
      try {
        const caller = (await agent.query('SELECT run_as_caller() AS who')).rows[0].who;
        expect(caller).toMatch(/_r_/);
        await expect(agent.query('SELECT run_as_owner()')).rejects.toThrow(/permission denied for function/);
      } finally {
        await agent.end();
      }
    } finally {
      await sandbox.dispose();
    }
  });
});
