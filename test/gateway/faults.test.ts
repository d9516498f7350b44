// Every fault of docs/formats/twin.md, both facts: what the database holds afterwards (queried on the
// sandbox) and what the caller received over real HTTP (status, headers, body).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultName } from '../../src/config/schema.js';
import { type Episode, num, openShop, rule, type Shop } from './fixture.js';

let shop: Shop;
beforeAll(async () => {
  shop = await openShop();
}, 300_000);
afterAll(async () => {
  await shop?.close();
}, 300_000);

const REFUND = { order_id: 'ORD-1', amount: 40 };

/** An episode whose first refund call gets `fault` (plus any rule fields). */
function faulted(fault: FaultName, extra: Record<string, unknown> = {}, tool = 'refund'): Promise<Episode> {
  return shop.episode({ faults: [rule({ tool, when: { call: 1 }, fault, ...extra })], initialState: true });
}

async function refunds(ep: Episode): Promise<{ count: number; refunded: number; rows: number }> {
  const { rows } = await ep.sandbox.query(
    "SELECT refund_count, refunded_amount, (SELECT count(*) FROM refunds) AS n FROM orders WHERE id = 'ORD-1'",
  );
  return { count: num(rows[0].refund_count), refunded: num(rows[0].refunded_amount), rows: num(rows[0].n) };
}

const NOTHING = { count: 0, refunded: 0, rows: 0 };
const ONCE = { count: 1, refunded: 40, rows: 1 };

describe('faults where nothing happens and the caller sees an error', () => {
  const cases: [FaultName, number, string][] = [
    ['timeout_before_mutation', 504, 'TIMEOUT'],
    ['server_error', 500, 'SERVER_ERROR'],
    ['non_retryable_error', 422, 'UNPROCESSABLE'],
    ['auth_denied', 403, 'AUTH_DENIED'],
  ];
  for (const [fault, status, code] of cases) {
    it(`${fault}: nothing / ${status} ${code}`, async () => {
      const ep = await faulted(fault, { message: `Injected ${fault}.` });
      const res = await ep.post('refund', REFUND);
      expect(res.status).toBe(status);
      expect(res.json).toEqual({ error: { code, message: `Injected ${fault}.` } });
      expect(res.headers.get('retry-after')).toBeNull();
      expect(await refunds(ep)).toEqual(NOTHING);
      expect(ep.session.calls()[0]).toMatchObject({
        status,
        fault,
        mutated: false,
        changes: [],
        error: { code },
      });
      // The rule fired on call 1 only: call 2 goes through.
      expect((await ep.post('refund', REFUND)).status).toBe(200);
      expect(await refunds(ep)).toEqual(ONCE);
    });
  }

  it('rate_limited: nothing / 429 with Retry-After (1 s by default)', async () => {
    const ep = await faulted('rate_limited');
    const res = await ep.post('refund', REFUND);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.json.error.code).toBe('RATE_LIMITED');
    expect(res.json.error.message).toBe('Too many requests.');
    expect(await refunds(ep)).toEqual(NOTHING);
    expect(ep.session.calls()[0]).toMatchObject({ status: 429, fault: 'rate_limited', mutated: false });
  });

  it('unavailable: nothing / 503 with the rule retry_after', async () => {
    const ep = await faulted('unavailable', { retry_after: 7 });
    const res = await ep.post('refund', REFUND);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.json.error.code).toBe('UNAVAILABLE');
    expect(await refunds(ep)).toEqual(NOTHING);
  });

  it('dropped_connection: nothing / the socket closes without a response', async () => {
    const ep = await faulted('dropped_connection');
    await expect(ep.post('refund', REFUND)).rejects.toThrow(TypeError);
    expect(await refunds(ep)).toEqual(NOTHING);
    const [call] = ep.session.calls();
    expect(call).toMatchObject({
      status: 0,
      fault: 'dropped_connection',
      mutated: false,
      error: { code: 'DROPPED_CONNECTION' },
    });
    // The gateway keeps serving the episode afterwards.
    expect((await ep.post('refund', REFUND)).status).toBe(200);
  });
});

describe('faults where the effect is applied and the caller does not learn it', () => {
  it('timeout_after_mutation: applied / 504 TIMEOUT', async () => {
    const ep = await faulted('timeout_after_mutation', {
      message: 'The payment provider did not answer in time.',
    });
    const res = await ep.post('refund', REFUND);
    expect(res.status).toBe(504);
    expect(res.json).toEqual({
      error: { code: 'TIMEOUT', message: 'The payment provider did not answer in time.' },
    });
    expect(await refunds(ep)).toEqual(ONCE);
    const [call] = ep.session.calls();
    expect(call).toMatchObject({
      status: 504,
      fault: 'timeout_after_mutation',
      mutated: true,
      effectKey: 'refund:ORD-1',
    });
    expect(call.changes.map((c) => `${c.table}:${c.op}`).sort()).toEqual(['orders:update', 'refunds:insert']);
  });

  it('partial_response: applied / 200 with the body cut mid-JSON', async () => {
    const ep = await faulted('partial_response');
    const res = await ep.post('refund', REFUND);
    expect(res.status).toBe(200);
    expect(res.json).toBeUndefined();
    expect(res.text.startsWith('{"result":{')).toBe(true);
    expect(() => JSON.parse(res.text)).toThrow(SyntaxError);
    expect(await refunds(ep)).toEqual(ONCE);
    const [call] = ep.session.calls();
    expect(call).toMatchObject({ status: 200, fault: 'partial_response', mutated: true });
    // The whole reply would have been twice as long: the record keeps the full result.
    expect(JSON.stringify({ result: call.result }).startsWith(res.text)).toBe(true);
  });

  it('malformed_json: applied / 200 with a body that is not JSON', async () => {
    const ep = await faulted('malformed_json');
    const res = await ep.post('refund', REFUND);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(() => JSON.parse(res.text)).toThrow(SyntaxError);
    expect(res.text).toContain('"refund_id"');
    expect(await refunds(ep)).toEqual(ONCE);
    expect(ep.session.calls()[0]).toMatchObject({ status: 200, fault: 'malformed_json', mutated: true });
  });

  it('delay: applied / the normal reply, later', async () => {
    const ep = await faulted('delay', { delay_ms: 150 });
    const res = await ep.post('refund', REFUND);
    expect(res.status).toBe(200);
    expect(num(res.json.result.amount)).toBe(40);
    expect(await refunds(ep)).toEqual(ONCE);
    expect(ep.session.calls()[0]).toMatchObject({ status: 200, fault: 'delay', mutated: true });
  });

  it('stale_response: applied / the reply computed from the initial state', async () => {
    const ep = await shop.episode({
      faults: [rule({ tool: 'lookup_order', when: { call: 2 }, fault: 'stale_response' })],
      initialState: true,
    });
    expect((await ep.post('refund', REFUND)).status).toBe(200);
    const fresh = await ep.post('lookup_order', { order_id: 'ORD-1' });
    expect(fresh.json.result.refund_count).toBe(1);
    const stale = await ep.post('lookup_order', { order_id: 'ORD-1' });
    expect(stale.status).toBe(200);
    expect(stale.json.result.refund_count).toBe(0);
    expect(num(stale.json.result.refunded_amount)).toBe(0);
    expect(await refunds(ep)).toEqual(ONCE);
    expect(ep.session.calls()[2]).toMatchObject({
      tool: 'lookup_order',
      fault: 'stale_response',
      status: 200,
    });
  });

  it('stale_response on a write: the write lands, the reply is the initial state answer', async () => {
    const ep = await shop.episode({
      faults: [rule({ tool: 'refund', when: { call: 2 }, fault: 'stale_response' })],
      initialState: true,
    });
    const first = await ep.post('refund', { order_id: 'ORD-1', amount: 10 });
    const second = await ep.post('refund', { order_id: 'ORD-1', amount: 10 });
    expect(second.status).toBe(200);
    // On the initial state this is the first refund, on the sandbox the second.
    expect(second.json.result.refund_id).toBe(first.json.result.refund_id);
    expect(await refunds(ep)).toEqual({ count: 2, refunded: 20, rows: 2 });
    expect(ep.session.calls()[1]).toMatchObject({ mutated: true, fault: 'stale_response' });
    // The initial state itself is never written.
    expect(num((await ep.initial!.query('SELECT count(*) AS n FROM refunds')).rows[0].n)).toBe(0);
  });

  it('stale_response without an initial state: open() refuses the session', async () => {
    await expect(
      shop.episode({
        faults: [rule({ tool: 'lookup_order', fault: 'stale_response' })],
        initialState: false,
      }),
    ).rejects.toThrow(/stale_response fault needs the initial state/);
  });

  it('duplicate_delivery: applied twice / the first reply, and both deliveries recorded', async () => {
    const ep = await faulted('duplicate_delivery');
    const res = await ep.post('refund', REFUND);
    expect(res.status).toBe(200);
    expect(await refunds(ep)).toEqual({ count: 2, refunded: 80, rows: 2 });
    const { rows } = await ep.sandbox.query('SELECT id FROM refunds ORDER BY id');
    expect(res.json.result.refund_id).toBe(rows[0].id);
    const calls = ep.session.calls();
    expect(calls).toHaveLength(2);
    expect(calls.map((c) => [c.seq, c.fault, c.mutated, c.replay, c.effectKey])).toEqual([
      [1, 'duplicate_delivery', true, false, 'refund:ORD-1'],
      [2, 'duplicate_delivery', true, false, 'refund:ORD-1'],
    ]);
    expect((calls[1].result as { refund_id: number }).refund_id).toBe(rows[1].id);
  });

  it('duplicate_delivery of an idempotent call: applied once, the second delivery is a replay', async () => {
    const ep = await faulted('duplicate_delivery');
    const res = await ep.post('refund', { ...REFUND, idempotency_key: 'k-1' });
    expect(res.status).toBe(200);
    expect(await refunds(ep)).toEqual(ONCE);
    const calls = ep.session.calls();
    expect(calls.map((c) => [c.fault, c.mutated, c.replay])).toEqual([
      ['duplicate_delivery', true, false],
      ['duplicate_delivery', false, true],
    ]);
    expect(calls[1].result).toEqual(calls[0].result);
  });

  it('inconsistent_state: the first statement only, committed / 500', async () => {
    const ep = await faulted('inconsistent_state');
    const res = await ep.post('refund', REFUND);
    expect(res.status).toBe(500);
    expect(res.json.error.code).toBe('SERVER_ERROR');
    expect(await refunds(ep)).toEqual({ count: 1, refunded: 40, rows: 0 });
    const [call] = ep.session.calls();
    expect(call).toMatchObject({ status: 500, fault: 'inconsistent_state', mutated: true });
    expect(call.changes.map((c) => c.table)).toEqual(['orders']);
  });
});

describe('faults where the caller hears of success and nothing happened', () => {
  it('success_without_effect: nothing / the normal success reply', async () => {
    const ep = await faulted('success_without_effect');
    const res = await ep.post('refund', REFUND);
    expect(res.status).toBe(200);
    expect(num(res.json.result.amount)).toBe(40);
    expect(typeof res.json.result.refund_id).toBe('number');
    expect(await refunds(ep)).toEqual(NOTHING);
    expect(ep.session.calls()[0]).toMatchObject({
      status: 200,
      fault: 'success_without_effect',
      mutated: false,
      changes: [],
    });
  });

  it('empty_result: nothing / null for returns one, [] for returns many', async () => {
    const ep = await shop.episode({
      faults: [
        rule({ tool: 'refund', fault: 'empty_result' }),
        rule({ tool: 'list_orders', fault: 'empty_result' }),
        rule({ tool: 'lookup_order', fault: 'empty_result' }),
      ],
    });
    const refund = await ep.post('refund', REFUND);
    expect(refund).toMatchObject({ status: 200, json: { result: null } });
    expect(await refunds(ep)).toEqual(NOTHING);
    expect((await ep.post('list_orders', {})).json).toEqual({ result: [] });
    expect((await ep.post('lookup_order', { order_id: 'ORD-1' })).json).toEqual({ result: null });
    expect(ep.session.calls().map((c) => [c.fault, c.mutated])).toEqual([
      ['empty_result', false],
      ['empty_result', false],
      ['empty_result', false],
    ]);
  });
});

describe('rule conditions over real calls', () => {
  it('args: fires only for calls whose arguments include the values', async () => {
    const ep = await shop.episode({
      faults: [rule({ tool: 'lookup_order', when: { args: { order_id: 'ORD-2' } }, fault: 'server_error' })],
    });
    expect((await ep.post('lookup_order', { order_id: 'ORD-1' })).status).toBe(200);
    expect((await ep.post('lookup_order', { order_id: 'ORD-2' })).status).toBe(500);
    expect((await ep.post('lookup_order', { order_id: 'ORD-2' })).status).toBe(500);
  });

  it('first: n and calls: [..] count calls of that tool only; the first matching rule wins', async () => {
    const ep = await shop.episode({
      faults: [
        rule({ tool: 'lookup_order', when: { calls: [2, 4] }, fault: 'auth_denied' }),
        rule({ tool: 'lookup_order', when: { first: 2 }, fault: 'rate_limited' }),
      ],
    });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      statuses.push((await ep.post('lookup_order', { order_id: 'ORD-1' })).status);
      // Calls of another tool do not move lookup_order's count.
      await ep.post('list_orders', {});
    }
    expect(statuses).toEqual([429, 403, 200, 403, 200]);
  });

  it('probability: the same seed fires the same calls, whatever the timing', async () => {
    const faults = [rule({ tool: 'get_policy', when: { probability: 0.5 }, fault: 'server_error' })];
    const run = async (concurrent: boolean) => {
      const ep = await shop.episode({ faults, seed: 42 });
      if (concurrent) {
        await Promise.all(Array.from({ length: 40 }, () => ep.post('get_policy', {})));
      } else {
        for (let i = 0; i < 40; i++) await ep.post('get_policy', {});
      }
      return ep.session
        .calls()
        .map((c) => (c.fault ? 'F' : '.'))
        .join('');
    };
    const sequential = await run(false);
    expect(await run(false)).toBe(sequential);
    expect(sequential).toContain('F');
    expect(sequential).toContain('.');
    // Concurrent calls are numbered in arrival order: the same count of faults fire.
    expect((await run(true)).split('F').length).toBe(sequential.split('F').length);
  });
});
