// Twin logic in SQL functions: a PL/pgSQL function of the suite's schema, with variables, a loop and
// errors that carry values it computed, is one twin statement. A SQLSTATE the twin declares under
// `errors:` reaches the agent as the tool's error (over HTTP and over MCP with the official client);
// any other error raised there stays the harness's. On both engines, and without handing the
// agent's database role (expose) the suite role's privileges, or the suite a way around its log.
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { Tool } from '../../src/config/schema.js';
import { TwinTool } from '../../src/config/schema.js';
import { createGateway } from '../../src/gateway/index.js';
import type { EpisodeSession, Gateway } from '../../src/gateway/types.js';
import type { Engine, Sandbox, Template } from '../../src/sandbox/types.js';
import { engines } from '../helpers/engines.js';
import { post } from './fixture.js';

const SCHEMA = `
CREATE TABLE orders (id text PRIMARY KEY, status text NOT NULL);
CREATE TABLE items (
  order_id text NOT NULL REFERENCES orders (id),
  item_id text NOT NULL,
  price numeric(10,2) NOT NULL,
  returned boolean NOT NULL DEFAULT false,
  PRIMARY KEY (order_id, item_id)
);
CREATE TABLE returns (id serial PRIMARY KEY, order_id text NOT NULL, refund numeric(10,2) NOT NULL);

-- One tool's logic: variables, a loop over the items, and errors that quote computed values.
CREATE FUNCTION return_items(p_order text, p_items text[])
RETURNS TABLE (return_id integer, refund_total numeric) LANGUAGE plpgsql AS $fn$
DECLARE
  v_status text;
  v_item text;
  v_price numeric;
  v_total numeric := 0;
BEGIN
  SELECT status INTO v_status FROM orders WHERE id = p_order FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'SG404', MESSAGE = format('No order %s', p_order);
  END IF;
  IF v_status <> 'delivered' THEN
    RAISE EXCEPTION USING ERRCODE = 'SG409', MESSAGE = format('Order %s is %s', p_order, v_status),
      HINT = 'Only delivered orders can be returned.';
  END IF;
  FOREACH v_item IN ARRAY p_items LOOP
    SELECT price INTO v_price FROM items WHERE order_id = p_order AND item_id = v_item AND NOT returned;
    IF NOT FOUND THEN
      RAISE EXCEPTION USING ERRCODE = 'SG422',
        MESSAGE = format('Item %s of order %s cannot be returned', v_item, p_order),
        DETAIL = format('Refund so far: %s', v_total);
    END IF;
    UPDATE items SET returned = true WHERE order_id = p_order AND item_id = v_item;
    v_total := v_total + v_price;
  END LOOP;
  IF v_total > 100 THEN
    RAISE EXCEPTION USING ERRCODE = 'SG422', MESSAGE = format('Refund %s is over the limit of 100', v_total);
  END IF;
  RETURN QUERY INSERT INTO returns (order_id, refund) VALUES (p_order, v_total) RETURNING id, refund;
END $fn$;

-- A bug, not a tool answer: an undeclared SQLSTATE.
CREATE FUNCTION broken_total(p_order text) RETURNS numeric LANGUAGE plpgsql AS $fn$
BEGIN
  RETURN (SELECT sum(price) FROM items WHERE order_id = p_order) / 0;
END $fn$;

-- SECURITY DEFINER functions run as their owner, the suite role: no more than the twin may do.
CREATE FUNCTION erase_log() RETURNS void LANGUAGE plpgsql SECURITY DEFINER AS $fn$
BEGIN
  DELETE FROM stategate.changes;
END $fn$;
CREATE FUNCTION forge_log() RETURNS void LANGUAGE plpgsql SECURITY DEFINER AS $fn$
BEGIN
  INSERT INTO stategate.changes (tbl, op, new) VALUES ('orders', 'I', '{"id": "forged"}');
END $fn$;
CREATE FUNCTION reach_out() RETURNS void LANGUAGE plpgsql SECURITY DEFINER AS $fn$
BEGIN
  CREATE EXTENSION dblink;
END $fn$;
CREATE FUNCTION run_program() RETURNS void LANGUAGE plpgsql SECURITY DEFINER AS $fn$
BEGIN
  COPY (SELECT 1) TO PROGRAM 'true';
END $fn$;
CREATE FUNCTION delivered_count() RETURNS bigint LANGUAGE sql SECURITY DEFINER AS
  $fn$ SELECT count(*) FROM orders WHERE status = 'delivered' $fn$;
CREATE FUNCTION order_count() RETURNS bigint LANGUAGE sql AS $fn$ SELECT count(*) FROM orders $fn$;
`;

const FIXTURES = `
INSERT INTO orders (id, status) VALUES ('O-1', 'delivered'), ('O-2', 'pending');
INSERT INTO items (order_id, item_id, price) VALUES
  ('O-1', 'shirt', 30.50), ('O-1', 'shoes', 80.00), ('O-1', 'socks', 4.25), ('O-2', 'hat', 12.00);
`;

/** The tools as a twin file declares them. */
const TWIN = parseYaml(`
tools:
  return_items:
    description: Return delivered items of an order; refunds at most 100.
    risk: write_irreversible
    input:
      type: object
      properties:
        order_id: { type: string }
        item_ids: { type: array, items: { type: string }, minItems: 1 }
      required: [order_id, item_ids]
    sql: SELECT return_id, refund_total FROM return_items(:order_id, :item_ids::text[])
    returns: one
    errors:
      SG404: { status: 404, code: ORDER_NOT_FOUND }
      SG409: { status: 409, code: ORDER_NOT_DELIVERED }
      SG422: { status: 422, code: CANNOT_RETURN }
  order_total:
    input: { type: object, properties: { order_id: { type: string } }, required: [order_id] }
    sql: SELECT broken_total(:order_id) AS total
    returns: one
    errors:
      SG404: { status: 404, code: ORDER_NOT_FOUND }
  erase_log:
    risk: write
    sql: SELECT erase_log()
    returns: none
  forge_log:
    risk: write
    sql: SELECT forge_log()
    returns: none
  reach_out:
    sql: SELECT reach_out()
    returns: none
  run_program:
    sql: SELECT run_program()
    returns: none
`) as { tools: Record<string, unknown> };

const TOOLS: Tool[] = Object.entries(TWIN.tools).map(([name, def]) => ({
  ...TwinTool.parse(def),
  name,
  file: 'twins/retail.yaml',
}));

describe.each(engines())('twin logic in SQL functions: $name engine', ({ create }) => {
  let engine: Engine;
  let template: Template;
  let gateway: Gateway;
  const open: Sandbox[] = [];
  const clients: Client[] = [];

  beforeAll(async () => {
    engine = await create();
    template = await engine.buildTemplate({
      schema: [{ file: 'db/schema.sql', sql: SCHEMA }],
      fixtures: [{ file: 'db/fixtures.sql', sql: FIXTURES }],
    });
    gateway = await createGateway();
  }, 300_000);
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await gateway?.close();
    await Promise.allSettled(open.map((s) => s.dispose()));
    await engine?.close();
  }, 300_000);

  async function episode(): Promise<{ session: EpisodeSession; sandbox: Sandbox }> {
    const label = randomBytes(3).toString('hex');
    const sandbox = await template.clone(`fn-${label}`);
    open.push(sandbox);
    const session = gateway.open({
      episode: `ep-${label}`,
      scenario: 'retail',
      side: 'head',
      seed: 1,
      tools: TOOLS,
      faults: [],
      sandbox,
    });
    return { session, sandbox };
  }

  const call = (session: EpisodeSession, tool: string, args: unknown) =>
    post(`${session.toolsUrl}/tools/${tool}`, args);

  async function returned(sandbox: Sandbox): Promise<string[]> {
    const { rows } = await sandbox.query(
      "SELECT item_id FROM items WHERE order_id = 'O-1' AND returned ORDER BY item_id",
    );
    return rows.map((r) => String(r.item_id));
  }

  it('runs the loop and answers with what the function returned', async () => {
    const { session, sandbox } = await episode();
    const res = await call(session, 'return_items', { order_id: 'O-1', item_ids: ['shirt', 'socks'] });
    expect(res.status).toBe(200);
    expect(Number(res.json.result.refund_total)).toBe(34.75);
    expect(await returned(sandbox)).toEqual(['shirt', 'socks']);
    const [record] = session.calls();
    expect(record).toMatchObject({ tool: 'return_items', status: 200, mutated: true });
    expect(record.harnessError).toBeUndefined();
  });

  it('maps each declared SQLSTATE to its status and code, with the message the function computed', async () => {
    const { session, sandbox } = await episode();
    const missing = await call(session, 'return_items', { order_id: 'O-9', item_ids: ['shirt'] });
    expect(missing.status).toBe(404);
    expect(missing.json.error).toEqual({ code: 'ORDER_NOT_FOUND', message: 'No order O-9' });

    const pending = await call(session, 'return_items', { order_id: 'O-2', item_ids: ['hat'] });
    expect(pending.status).toBe(409);
    expect(pending.json.error).toEqual({
      code: 'ORDER_NOT_DELIVERED',
      message: 'Order O-2 is pending\nOnly delivered orders can be returned.',
    });

    // The second item is not one of the order's: the message names it and the refund so far.
    const unknown = await call(session, 'return_items', { order_id: 'O-1', item_ids: ['shirt', 'gloves'] });
    expect(unknown.status).toBe(422);
    expect(unknown.json.error).toEqual({
      code: 'CANNOT_RETURN',
      message: 'Item gloves of order O-1 cannot be returned\nRefund so far: 30.50',
    });

    // A value only the loop knows: the sum of the prices.
    const over = await call(session, 'return_items', { order_id: 'O-1', item_ids: ['shirt', 'shoes'] });
    expect(over.status).toBe(422);
    expect(over.json.error).toEqual({
      code: 'CANNOT_RETURN',
      message: 'Refund 110.50 is over the limit of 100',
    });

    // Every error rolled the whole call back, the items the loop had already marked too.
    expect(await returned(sandbox)).toEqual([]);
    const calls = session.calls();
    expect(calls.map((c) => c.status)).toEqual([404, 409, 422, 422]);
    expect(calls.every((c) => c.harnessError === undefined && c.mutated === false)).toBe(true);
  });

  it('shows the declared error to an MCP client as an error result with status, code and message', async () => {
    const { session } = await episode();
    const client = new Client({ name: 'stategate-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcpUrl)));
    clients.push(client);
    const over = await client.callTool({
      name: 'return_items',
      arguments: { order_id: 'O-1', item_ids: ['shoes', 'shirt'] },
    });
    expect(over.isError).toBe(true);
    expect(over.structuredContent).toEqual({
      status: 422,
      code: 'CANNOT_RETURN',
      message: 'Refund 110.50 is over the limit of 100',
    });
    const ok = await client.callTool({
      name: 'return_items',
      arguments: { order_id: 'O-1', item_ids: ['socks'] },
    });
    expect(ok.isError).toBeFalsy();
    expect(session.calls().map((c) => [c.via, c.status])).toEqual([
      ['mcp', 422],
      ['mcp', 200],
    ]);
  });

  it('keeps an undeclared SQLSTATE raised in a function a harness error, never a tool answer', async () => {
    const { session } = await episode();
    const res = await call(session, 'order_total', { order_id: 'O-1' });
    expect(res.status).toBe(422);
    const [record] = session.calls();
    expect(record.harnessError).toMatch(/^INVALID_VALUE \(SQLSTATE 22012\): division by zero/);
  });

  it('gives SECURITY DEFINER functions no more than the suite role: the log can be neither erased nor forged', async () => {
    const { session, sandbox } = await episode();
    await call(session, 'return_items', { order_id: 'O-1', item_ids: ['socks'] });
    for (const tool of ['erase_log', 'forge_log']) {
      await call(session, tool, {});
      const record = session.calls().at(-1)!;
      expect(record.harnessError, tool).toMatch(
        /SQLSTATE 42501\): permission denied for (table|sequence) changes/,
      );
    }
    // The log still holds the return and nothing forged: the net diff is what the tools did.
    const diff = await sandbox.captureDiff();
    expect(diff.tables.orders).toBeUndefined();
    expect(diff.tables.returns?.inserted).toHaveLength(1);
    expect(diff.tables.items?.updated).toHaveLength(1);
  });

  it('gives SECURITY DEFINER functions no way to other databases or server programs', async () => {
    const { session } = await episode();
    await call(session, 'reach_out', {});
    await call(session, 'run_program', {});
    const [extension, program] = session.calls().map((c) => c.harnessError);
    expect(extension).toMatch(
      /SQLSTATE 42501\): permission denied to create extension "dblink"|SQLSTATE 58P01\)/,
    );
    expect(program).toMatch(/SQLSTATE 42501\).*COPY to or from an external program/);
  });

  it("refuses the agent's own database role the suite's SECURITY DEFINER functions, not its other functions", async () => {
    const { sandbox } = await episode();
    const agent = new pg.Client({ connectionString: await sandbox.exposeUrl() });
    await agent.connect();
    try {
      expect((await agent.query('SELECT order_count() AS n')).rows[0].n).toBe('2');
      for (const fn of ['delivered_count()', 'erase_log()', 'forge_log()']) {
        await expect(agent.query(`SELECT ${fn}`), fn).rejects.toThrow(/permission denied for function/);
      }
    } finally {
      await agent.end();
    }
  });
});
