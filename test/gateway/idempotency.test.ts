// Idempotency keys over real HTTP: replays, conflicts, retries after faults, concurrent retries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Episode, num, openShop, rule, type Shop } from './fixture.js';

let shop: Shop;
beforeAll(async () => {
  shop = await openShop();
}, 300_000);
afterAll(async () => {
  await shop?.close();
}, 300_000);

async function refundCount(ep: Episode): Promise<number> {
  return num(await ep.scalar("SELECT refund_count FROM orders WHERE id = 'ORD-1'"));
}

describe('idempotency keys', () => {
  it('replays the stored status and body for the same key and the same arguments in any key order', async () => {
    const ep = await shop.episode();
    const first = await ep.post('refund', { order_id: 'ORD-1', amount: 40, idempotency_key: 'k-1' });
    const again = await ep.post('refund', { idempotency_key: 'k-1', amount: 40, order_id: 'ORD-1' });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(await refundCount(ep)).toBe(1);
    expect(ep.session.calls().map((c) => [c.replay, c.mutated, c.effectKey])).toEqual([
      [false, true, 'refund:ORD-1'],
      [true, false, 'refund:ORD-1'],
    ]);
  });

  it('answers 409 IDEMPOTENCY_CONFLICT for the same key with different arguments', async () => {
    const ep = await shop.episode();
    await ep.post('refund', { order_id: 'ORD-1', amount: 40, idempotency_key: 'k-1' });
    const other = await ep.post('refund', { order_id: 'ORD-1', amount: 41, idempotency_key: 'k-1' });
    expect(other.status).toBe(409);
    expect(other.json.error.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(other.json.error.message).toContain('"k-1"');
    expect(await refundCount(ep)).toBe(1);
    expect(ep.session.calls()[1]).toMatchObject({ status: 409, replay: false, mutated: false });
  });

  it('calls without the key, or with other keys, are separate effects', async () => {
    const ep = await shop.episode();
    await ep.post('refund', { order_id: 'ORD-1', amount: 10 });
    await ep.post('refund', { order_id: 'ORD-1', amount: 10 });
    await ep.post('refund', { order_id: 'ORD-1', amount: 10, idempotency_key: 'a' });
    await ep.post('refund', { order_id: 'ORD-1', amount: 10, idempotency_key: 'b' });
    expect(await refundCount(ep)).toBe(4);
    expect(ep.session.calls().every((c) => !c.replay)).toBe(true);
  });

  it('a retry after timeout_after_mutation replays the applied answer instead of refunding twice', async () => {
    const ep = await shop.episode({
      faults: [rule({ tool: 'refund', when: { call: 1 }, fault: 'timeout_after_mutation' })],
    });
    const args = { order_id: 'ORD-1', amount: 40, idempotency_key: 'k-9' };
    expect((await ep.post('refund', args)).status).toBe(504);
    const retry = await ep.post('refund', args);
    expect(retry.status).toBe(200);
    expect(num(retry.json.result.amount)).toBe(40);
    expect(await refundCount(ep)).toBe(1);
    expect(ep.session.calls().map((c) => [c.status, c.mutated, c.replay])).toEqual([
      [504, true, false],
      [200, false, true],
    ]);
  });

  it('a retry after timeout_before_mutation runs the tool: nothing was kept under the key', async () => {
    const ep = await shop.episode({
      faults: [rule({ tool: 'refund', when: { call: 1 }, fault: 'timeout_before_mutation' })],
    });
    const args = { order_id: 'ORD-1', amount: 40, idempotency_key: 'k-9' };
    expect((await ep.post('refund', args)).status).toBe(504);
    const retry = await ep.post('refund', args);
    expect(retry.status).toBe(200);
    expect(await refundCount(ep)).toBe(1);
    expect(ep.session.calls()[1]).toMatchObject({ replay: false, mutated: true });
  });

  it('keeps a 4xx answer of the tool under the key and replays it', async () => {
    const ep = await shop.episode();
    const args = { order_id: 'ORD-2', amount: 500, idempotency_key: 'too-much' };
    const first = await ep.post('refund', args);
    expect(first.status).toBe(422);
    const again = await ep.post('refund', args);
    expect(again.status).toBe(422);
    expect(again.text).toBe(first.text);
    expect(ep.session.calls()[1].replay).toBe(true);
  });

  it('twenty concurrent calls with one key apply the effect once', async () => {
    const ep = await shop.episode();
    const args = { order_id: 'ORD-1', amount: 5, idempotency_key: 'same' };
    const replies = await Promise.all(Array.from({ length: 20 }, () => ep.post('refund', args)));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(new Set(replies.map((r) => r.json.result.refund_id)).size).toBe(1);
    expect(await refundCount(ep)).toBe(1);
    const calls = ep.session.calls();
    expect(calls.filter((c) => !c.replay)).toHaveLength(1);
    expect(calls.filter((c) => c.replay)).toHaveLength(19);
  });
});
