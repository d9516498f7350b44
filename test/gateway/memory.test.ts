// What the gateway keeps does not grow with the number of episodes: closed tokens are remembered
// only while recent, refused requests are counted but kept only up to a limit. Sizes, never time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway/index.js';
import type { Gateway, SessionSpec } from '../../src/gateway/types.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { ALLOWED, openShop, post, type Shop, SUITE } from './fixture.js';

let shop: Shop;
let sandbox: Sandbox;
beforeAll(async () => {
  shop = await openShop();
  sandbox = await shop.template.clone('memory');
}, 300_000);
afterAll(async () => {
  await sandbox?.dispose();
  await shop?.close();
}, 300_000);

const spec = (n: number): SessionSpec => ({
  episode: `ep-${n}`,
  scenario: 'shop',
  side: 'head',
  seed: 7,
  tools: ALLOWED,
  suiteTools: SUITE,
  faults: [],
  sandbox,
});

const tokenOf = (url: string) => url.split('/e/')[1];

describe('gateway memory over many episodes', () => {
  let gateway: Gateway;
  afterAll(async () => {
    await gateway?.close();
  });

  it('remembers only the most recent closed tokens; older ones get the same 404 as unknown ones', async () => {
    gateway = await createGateway({ closedTokensKept: 100 });
    const urls: string[] = [];
    for (let i = 0; i < 2_500; i++) {
      const session = gateway.open(spec(i));
      if (i === 0 || i === 2_499) {
        // A real call through the session, so the record path runs too.
        const res = await post(`${session.toolsUrl}/tools/lookup_order`, { order_id: 'ORD-1' });
        expect(res.status).toBe(200);
        expect(session.calls()).toHaveLength(1);
      }
      await session.close();
      urls.push(session.toolsUrl);
    }
    expect(gateway.sizes()).toEqual({ sessions: 0, closedTokens: 100, refused: 0 });

    const oldest = await post(`${urls[0]}/tools/lookup_order`, { order_id: 'ORD-1' });
    const newest = await post(`${urls.at(-1)}/tools/lookup_order`, { order_id: 'ORD-1' });
    expect(oldest.status).toBe(404);
    expect(newest.status).toBe(404);
    expect(oldest.text).toBe(newest.text);
    const reasons = new Map(gateway.refused().map((r) => [r.path.split('/')[2], r.reason]));
    expect(reasons.get(tokenOf(urls.at(-1)!))).toBe('POST: the episode is closed');
    expect(reasons.get(tokenOf(urls[0]))).toBe('POST: unknown episode token');
    // Open sessions never count against the limit, and stay reachable.
    const open = gateway.open(spec(-1));
    expect(gateway.sizes().sessions).toBe(1);
    expect((await post(`${open.toolsUrl}/tools/lookup_order`, { order_id: 'ORD-1' })).status).toBe(200);
    await open.close();
    expect(gateway.sizes()).toMatchObject({ sessions: 0, closedTokens: 100 });
  });

  it('keeps the first refused requests up to its limit and counts them all', async () => {
    const small = await createGateway({ refusedKept: 5 });
    try {
      const base = `http://127.0.0.1:${small.port}`;
      for (let i = 0; i < 40; i++) {
        const res = await post(`${base}/e/${i.toString(16).padStart(32, '0')}/tools/x`, {});
        expect(res.status).toBe(404);
      }
      expect(small.refusedCount()).toBe(40);
      expect(small.refused()).toHaveLength(5);
      expect(small.refused()[0].path).toBe(`/e/${'0'.repeat(32)}/tools/x`);
      expect(small.sizes().refused).toBe(5);
    } finally {
      await small.close();
    }
  });
});
