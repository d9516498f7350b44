// The HTTP JSON side over real HTTP against a real sandbox: listing, the order of checks, the tool's
// result shapes, SQL errors, the record, unknown tokens and closing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/until.js';
import { num, openShop, post, rule, type Shop } from './fixture.js';

let shop: Shop;
beforeAll(async () => {
  shop = await openShop();
}, 300_000);
afterAll(async () => {
  await shop?.close();
}, 300_000);

describe('GET /tools', () => {
  it('lists the allowed tools with name, description and input_schema', async () => {
    const { session } = await shop.episode();
    const res = await fetch(`${session.toolsUrl}/tools`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { tools: { name: string; description: string; input_schema: any }[] };
    expect(body.tools.map((t) => t.name)).toEqual([
      'lookup_order',
      'list_orders',
      'refund',
      'add_note',
      'get_policy',
    ]);
    const lookup = body.tools[0];
    expect(lookup.description).toBe('Look up an order by id.');
    expect(lookup.input_schema).toEqual({
      type: 'object',
      properties: { order_id: { type: 'string' } },
      required: ['order_id'],
    });
    expect(session.mcpUrl).toBe(`${session.toolsUrl}/mcp`);
    expect(session.toolsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/e\/[0-9a-f]{32}$/);
  });
});

describe('calls', () => {
  it('returns one row as an object, many as an array, none as {ok: true}, static as given', async () => {
    const ep = await shop.episode();
    const one = await ep.post('lookup_order', { order_id: 'ORD-1' });
    expect(one.status).toBe(200);
    expect(one.headers.get('content-type')).toMatch(/^application\/json/);
    expect(one.json.result).toMatchObject({ id: 'ORD-1', refund_count: 0 });
    expect(num(one.json.result.total)).toBe(120);

    const many = await ep.post('list_orders', {});
    expect(many.json).toEqual({
      result: [
        { id: 'ORD-1', refund_count: 0 },
        { id: 'ORD-2', refund_count: 0 },
      ],
    });
    const none = await ep.post('add_note', { body: 'hello' });
    expect(none).toMatchObject({ status: 200, json: { result: { ok: true } } });
    expect(num(await ep.scalar('SELECT count(*) FROM notes'))).toBe(1);

    const policy = await ep.post('get_policy', '');
    expect(policy).toMatchObject({ status: 200, json: { result: { max_auto_refund: 100 } } });
  });

  it('runs every statement in one transaction and answers with the last one', async () => {
    const ep = await shop.episode();
    const res = await ep.post('refund', { order_id: 'ORD-1', amount: 40 });
    expect(res.status).toBe(200);
    expect(num(res.json.result.amount)).toBe(40);
    expect(typeof res.json.result.refund_id).toBe('number');
    expect(num(await ep.scalar("SELECT refunded_amount FROM orders WHERE id = 'ORD-1'"))).toBe(40);
    expect(num(await ep.scalar('SELECT count(*) FROM refunds'))).toBe(1);
    const [call] = ep.session.calls();
    expect(call).toMatchObject({
      seq: 1,
      tool: 'refund',
      args: { amount: 40, order_id: 'ORD-1' },
      status: 200,
      mutated: true,
      replay: false,
      effectKey: 'refund:ORD-1',
      risk: 'write_irreversible',
      via: 'http',
    });
    expect(call.fault).toBeUndefined();
    expect(call.changes.length).toBeGreaterThanOrEqual(2);
    expect(new Set(call.changes.map((c) => c.table))).toEqual(new Set(['orders', 'refunds']));
  });

  it('answers not_found with its status, code and filled message, and null without not_found', async () => {
    const ep = await shop.episode();
    const res = await ep.post('lookup_order', { order_id: 'ORD-404' });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: { code: 'ORDER_NOT_FOUND', message: 'No order ORD-404' } });
    const call = ep.session.calls()[0];
    expect(call).toMatchObject({ status: 404, mutated: false, error: { code: 'ORDER_NOT_FOUND' } });
  });

  it('fails a precondition with the rule error and placeholders filled, changing nothing', async () => {
    const ep = await shop.episode();
    const res = await ep.post('refund', { order_id: 'ORD-2', amount: 75.5 });
    expect(res.status).toBe(422);
    expect(res.json).toEqual({
      error: { code: 'AMOUNT_EXCEEDS_ORDER', message: 'Cannot refund 75.5 on ORD-2' },
    });
    expect(num(await ep.scalar("SELECT refund_count FROM orders WHERE id = 'ORD-2'"))).toBe(0);
    expect(num(await ep.scalar('SELECT count(*) FROM refunds'))).toBe(0);
    expect(ep.session.calls()[0]).toMatchObject({ status: 422, mutated: false, changes: [] });
  });

  it('turns a unique violation into 409 CONSTRAINT_VIOLATION and keeps serving', async () => {
    const ep = await shop.episode();
    expect((await ep.post('add_note', { body: 'same' })).status).toBe(200);
    const dup = await ep.post('add_note', { body: 'same' });
    expect(dup.status).toBe(409);
    expect(dup.json.error.code).toBe('CONSTRAINT_VIOLATION');
    expect(dup.json.error.message).toMatch(/unique/);
    const text = await ep.post('lookup_order', { order_id: 'ORD-1' });
    expect(text.status).toBe(200);
    expect(num(await ep.scalar('SELECT count(*) FROM notes'))).toBe(1);
    expect(ep.session.calls().map((c) => c.status)).toEqual([200, 409, 200]);
    expect(ep.session.calls()[1].mutated).toBe(false);
  });
});

describe('the order of checks', () => {
  it('refuses a suite tool the scenario does not allow with 403, and records it', async () => {
    const ep = await shop.episode();
    const res = await ep.post('wipe_orders', {});
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe('TOOL_NOT_ALLOWED');
    expect(num(await ep.scalar('SELECT count(*) FROM orders'))).toBe(2);
    expect(ep.session.calls()[0]).toMatchObject({
      tool: 'wipe_orders',
      status: 403,
      risk: 'write',
      mutated: false,
    });
  });

  it('answers 404 UNKNOWN_TOOL for a name no twin defines, and records it', async () => {
    const ep = await shop.episode();
    const res = await ep.post('launch_rocket', { now: true });
    expect(res.status).toBe(404);
    expect(res.json.error).toEqual({
      code: 'UNKNOWN_TOOL',
      message: 'There is no tool named launch_rocket.',
    });
    expect(ep.session.calls()[0]).toMatchObject({ tool: 'launch_rocket', status: 404, args: { now: true } });
  });

  it('checks the allowed list before the body: a not-allowed tool with a broken body is still 403', async () => {
    const ep = await shop.episode();
    expect((await ep.post('wipe_orders', '{nope')).status).toBe(403);
    expect((await ep.post('lookup_order', '{nope')).status).toBe(400);
  });

  it('answers 400 INVALID_JSON for a body that is not JSON', async () => {
    const ep = await shop.episode();
    const res = await ep.post('lookup_order', '{"order_id": ');
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('INVALID_JSON');
    expect(ep.session.calls()[0]).toMatchObject({ status: 400, args: null, error: { code: 'INVALID_JSON' } });
  });

  it('answers 400 INVALID_ARGUMENTS naming the path of each bad field', async () => {
    const ep = await shop.episode();
    const wrongType = await ep.post('refund', { order_id: 'ORD-1', amount: 'forty' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.json.error).toEqual({ code: 'INVALID_ARGUMENTS', message: '/amount must be number' });
    const missing = await ep.post('refund', { amount: 5, extra: 1 });
    expect(missing.json.error.message).toContain("must have required property 'order_id'");
    expect(missing.json.error.message).toContain("must NOT have additional properties: 'extra'");
    const notObject = await ep.post('refund', [1, 2]);
    expect(notObject.json.error.message).toBe('arguments must be a JSON object');
    expect(num(await ep.scalar('SELECT count(*) FROM refunds'))).toBe(0);
  });

  it('validates before faults: an invalid call does not use up a `call: 1` fault', async () => {
    const ep = await shop.episode({
      faults: [rule({ tool: 'lookup_order', when: { call: 1 }, fault: 'server_error' })],
    });
    expect((await ep.post('lookup_order', {})).status).toBe(400);
    expect((await ep.post('lookup_order', { order_id: 'ORD-1' })).status).toBe(500);
    expect((await ep.post('lookup_order', { order_id: 'ORD-1' })).status).toBe(200);
  });
});

describe('the record', () => {
  it('records args canonically, in arrival order, with timing fields', async () => {
    const ep = await shop.episode();
    await ep.post('refund', { order_id: 'ORD-1', amount: 10, idempotency_key: 'k' });
    await ep.post('lookup_order', { order_id: 'ORD-1' });
    const calls = ep.session.calls();
    expect(calls.map((c) => c.seq)).toEqual([1, 2]);
    expect(JSON.stringify(calls[0].args)).toBe('{"amount":10,"idempotency_key":"k","order_id":"ORD-1"}');
    expect(Number.isNaN(Date.parse(calls[0].startedAt))).toBe(false);
    expect(calls[0].durationMs).toBeGreaterThanOrEqual(0);
    expect(calls[1]).toMatchObject({ risk: 'read', mutated: false, changes: [] });
  });

  it('records every one of 1,000 concurrent calls with unique sequence numbers', async () => {
    const ep = await shop.episode();
    const replies = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => ep.post('add_note', { body: `note ${i}` })),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1000);
    const calls = ep.session.calls();
    expect(calls).toHaveLength(1000);
    expect(calls.map((c) => c.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(new Set(calls.map((c) => (c.args as { body: string }).body)).size).toBe(1000);
    expect(calls.every((c) => c.mutated)).toBe(true);
    expect(num(await ep.scalar('SELECT count(*) FROM notes'))).toBe(1000);
  });
});

describe('tokens and closing', () => {
  it('answers every unknown or closed token with the same 404 body and keeps it in refused()', async () => {
    const ep = await shop.episode();
    const base = `http://127.0.0.1:${shop.gateway.port}`;
    const guessed = await post(`${base}/e/${'0'.repeat(32)}/tools/lookup_order`, { order_id: 'ORD-1' });
    const prefix = await post(`${ep.session.toolsUrl.slice(0, -1)}/tools/lookup_order`, {
      order_id: 'ORD-1',
    });
    const noPath = await fetch(`${base}/`);
    await ep.session.close();
    const closed = await post(`${ep.session.toolsUrl}/tools/lookup_order`, { order_id: 'ORD-1' });
    for (const res of [guessed, prefix, closed]) {
      expect(res.status).toBe(404);
      expect(res.text).toBe(guessed.text);
    }
    expect(noPath.status).toBe(404);
    expect(await noPath.text()).toBe(guessed.text);
    expect(guessed.text).not.toContain(ep.session.toolsUrl.split('/e/')[1]);
    const refused = shop.gateway.refused();
    const closedToken = ep.session.toolsUrl.split('/e/')[1];
    expect(refused.find((r) => r.path === `/e/${closedToken}/tools/lookup_order`)).toMatchObject({
      status: 404,
      reason: 'POST: the episode is closed',
    });
    expect(refused.find((r) => r.path.startsWith(`/e/${'0'.repeat(32)}`))?.reason).toBe(
      'POST: unknown episode token',
    );
    expect(refused.find((r) => r.path === '/')?.reason).toBe('GET: not an episode URL');
    expect(ep.session.calls()).toHaveLength(0);
  });

  it('gives each session its own token and keeps their records apart', async () => {
    const a = await shop.episode();
    const b = await shop.episode();
    expect(a.session.toolsUrl).not.toBe(b.session.toolsUrl);
    await a.post('add_note', { body: 'in a' });
    expect(a.session.calls()).toHaveLength(1);
    expect(b.session.calls()).toHaveLength(0);
    expect(num(await b.scalar('SELECT count(*) FROM notes'))).toBe(0);
  });

  it('close() lets in-flight calls finish and records them', async () => {
    const ep = await shop.episode({
      faults: [rule({ tool: 'refund', fault: 'delay', delay_ms: 300 })],
    });
    const pending = ep.post('refund', { order_id: 'ORD-1', amount: 1 });
    // Wait until the call is inside the gateway (its refund committed), then close.
    await until('the refund to commit', async () => num(await ep.scalar('SELECT count(*) FROM refunds')) > 0);
    await ep.session.close();
    expect(ep.session.calls()).toHaveLength(1);
    expect(ep.session.calls()[0]).toMatchObject({ status: 200, fault: 'delay', mutated: true });
    expect((await pending).status).toBe(200);
  });

  it('answers wrong paths and methods under a live token without recording a call', async () => {
    const ep = await shop.episode();
    const list = await fetch(`${ep.session.toolsUrl}/tools`, { method: 'POST' });
    expect(list.status).toBe(405);
    const get = await fetch(`${ep.session.toolsUrl}/tools/lookup_order`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const other = await fetch(`${ep.session.toolsUrl}/elsewhere`);
    expect(other.status).toBe(404);
    expect(ep.session.calls()).toHaveLength(0);
  });
});
