// SECURITY DEFINER functions run as the suite role for whoever calls them: the agent's own database
// role (database.expose) is refused them, and the aggregates built on them, whether the template or
// a scenario's state.sql created them, and may still call the other functions and aggregates.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyScenarioState } from '../../src/sandbox/apply.js';
import type { Engine, Template } from '../../src/sandbox/types.js';
import { engines } from '../helpers/engines.js';

// An aggregate runs its support functions without checking EXECUTE on them: one built on a
// SECURITY DEFINER function runs that function as its owner for whoever calls the aggregate.
const SCHEMA = `
CREATE TABLE orders (id text PRIMARY KEY, status text NOT NULL);
CREATE FUNCTION owner_step(acc text, x text) RETURNS text LANGUAGE sql SECURITY DEFINER AS
  $$ SELECT current_user::text $$;
CREATE AGGREGATE owner_of(text) (sfunc = owner_step, stype = text);
`;
const STATE_SQL = [
  `INSERT INTO orders VALUES ('O-1', 'delivered')`,
  `CREATE FUNCTION run_as_owner() RETURNS text LANGUAGE sql SECURITY DEFINER AS $$ SELECT current_user::text $$`,
  `CREATE FUNCTION run_as_caller() RETURNS text LANGUAGE sql AS $$ SELECT current_user::text $$`,
  `CREATE AGGREGATE state_owner_of(text) (sfunc = owner_step, stype = text)`,
  `CREATE AGGREGATE count_of(text) (sfunc = textcat, stype = text)`,
];

describe.each(engines())('SECURITY DEFINER functions and aggregates on $name', (testEngine) => {
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
        // Aggregates over a definer function, the template's and the state's, are refused too.
        for (const agg of ['owner_of', 'state_owner_of']) {
          await expect(agent.query(`SELECT ${agg}(id) FROM orders`), agg).rejects.toThrow(
            /permission denied for (function|aggregate)/,
          );
        }
        // An aggregate of ordinary functions stays callable.
        expect((await agent.query('SELECT count_of(id) AS ids FROM orders')).rows[0].ids).toBe('O-1');
      } finally {
        await agent.end();
      }
    } finally {
      await sandbox.dispose();
    }
  });
});
