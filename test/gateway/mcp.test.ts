// The MCP side with the SDK's own client over streamable HTTP: the same tools, the same call path,
// the same record (via 'mcp'), and faults that show to an MCP client as docs/mcp.md says.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EpisodeSession } from '../../src/gateway/types.js';
import { type Episode, num, openShop, rule, type Shop } from './fixture.js';

let shop: Shop;
const clients: Client[] = [];
beforeAll(async () => {
  shop = await openShop();
}, 300_000);
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await shop?.close();
}, 300_000);

async function connect(session: EpisodeSession): Promise<Client> {
  const client = new Client({ name: 'stategate-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(session.mcpUrl)));
  clients.push(client);
  return client;
}

async function refundCount(ep: Episode): Promise<number> {
  return num(await ep.scalar("SELECT refund_count FROM orders WHERE id = 'ORD-1'"));
}

describe('MCP', () => {
  it('lists the allowed tools with name, description and the input schema', async () => {
    const ep = await shop.episode();
    const client = await connect(ep.session);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'lookup_order',
      'list_orders',
      'refund',
      'add_note',
      'get_policy',
    ]);
    const refund = tools.find((t) => t.name === 'refund')!;
    expect(refund.description).toBe('Refund part of an order.');
    expect(refund.inputSchema).toMatchObject({
      type: 'object',
      required: ['order_id', 'amount'],
      properties: { amount: { type: 'number', exclusiveMinimum: 0 } },
    });
    // tools/list is not a tool call: nothing is recorded.
    expect(ep.session.calls()).toHaveLength(0);
  });

  it('calls a tool through the same path: the effect lands and the call is recorded via mcp', async () => {
    const ep = await shop.episode();
    const client = await connect(ep.session);
    const result = await client.callTool({ name: 'refund', arguments: { order_id: 'ORD-1', amount: 40 } });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { result: { refund_id: number; amount: unknown } };
    expect(num(structured.result.amount)).toBe(40);
    const text = (result.content as { type: string; text: string }[])[0];
    expect(text.type).toBe('text');
    expect(JSON.parse(text.text)).toEqual(structured.result);
    expect(await refundCount(ep)).toBe(1);
    expect(ep.session.calls()).toEqual([
      expect.objectContaining({
        seq: 1,
        tool: 'refund',
        status: 200,
        via: 'mcp',
        mutated: true,
        effectKey: 'refund:ORD-1',
      }),
    ]);
  });

  it('shows tool errors as isError results with status, code and message', async () => {
    const ep = await shop.episode();
    const client = await connect(ep.session);
    const bad = await client.callTool({ name: 'refund', arguments: { order_id: 'ORD-1', amount: 'x' } });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toEqual({
      status: 400,
      code: 'INVALID_ARGUMENTS',
      message: '/amount must be number',
    });
    expect((bad.content as { text: string }[])[0].text).toBe('400 INVALID_ARGUMENTS: /amount must be number');
    const missing = await client.callTool({ name: 'lookup_order', arguments: { order_id: 'ORD-9' } });
    expect(missing.structuredContent).toEqual({
      status: 404,
      code: 'ORDER_NOT_FOUND',
      message: 'No order ORD-9',
    });
    const hidden = await client.callTool({ name: 'wipe_orders', arguments: {} });
    expect(hidden.structuredContent).toMatchObject({ status: 403, code: 'TOOL_NOT_ALLOWED' });
    expect(ep.session.calls().map((c) => [c.via, c.status])).toEqual([
      ['mcp', 400],
      ['mcp', 404],
      ['mcp', 403],
    ]);
  });

  it('timeout_after_mutation: applied / an isError result 504 TIMEOUT', async () => {
    const ep = await shop.episode({
      faults: [
        rule({ tool: 'refund', when: { call: 1 }, fault: 'timeout_after_mutation', message: 'Too slow.' }),
      ],
    });
    const client = await connect(ep.session);
    const result = await client.callTool({ name: 'refund', arguments: { order_id: 'ORD-1', amount: 40 } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({ status: 504, code: 'TIMEOUT', message: 'Too slow.' });
    expect((result.content as { text: string }[])[0].text).toBe('504 TIMEOUT: Too slow.');
    expect(await refundCount(ep)).toBe(1);
    expect(ep.session.calls()[0]).toMatchObject({
      via: 'mcp',
      status: 504,
      fault: 'timeout_after_mutation',
      mutated: true,
    });
  });

  it('rate_limited: nothing / an isError result carrying retry_after', async () => {
    const ep = await shop.episode({
      faults: [rule({ tool: 'refund', fault: 'rate_limited', retry_after: 3 })],
    });
    const client = await connect(ep.session);
    const result = await client.callTool({ name: 'refund', arguments: { order_id: 'ORD-1', amount: 40 } });
    expect(result.structuredContent).toEqual({
      status: 429,
      code: 'RATE_LIMITED',
      message: 'Too many requests.',
      retry_after: 3,
    });
    expect(await refundCount(ep)).toBe(0);
  });

  it('dropped_connection: nothing / the request fails without a response', async () => {
    const ep = await shop.episode({
      faults: [rule({ tool: 'refund', when: { call: 1 }, fault: 'dropped_connection' })],
    });
    const client = await connect(ep.session);
    await expect(
      client.callTool({ name: 'refund', arguments: { order_id: 'ORD-1', amount: 40 } }),
    ).rejects.toThrow();
    expect(await refundCount(ep)).toBe(0);
    expect(ep.session.calls()[0]).toMatchObject({ via: 'mcp', status: 0, fault: 'dropped_connection' });
    // The same client keeps working for the next call.
    const next = await client.callTool({ name: 'refund', arguments: { order_id: 'ORD-1', amount: 40 } });
    expect(next.isError).toBeFalsy();
    expect(await refundCount(ep)).toBe(1);
  });

  it('malformed_json and partial_response: applied / a response body the client cannot parse', async () => {
    const ep = await shop.episode({
      faults: [
        rule({ tool: 'refund', when: { call: 1 }, fault: 'malformed_json' }),
        rule({ tool: 'refund', when: { call: 2 }, fault: 'partial_response' }),
      ],
    });
    const client = await connect(ep.session);
    const args = { order_id: 'ORD-1', amount: 10 };
    await expect(client.callTool({ name: 'refund', arguments: args })).rejects.toThrow();
    await expect(client.callTool({ name: 'refund', arguments: args })).rejects.toThrow();
    expect(await refundCount(ep)).toBe(2);
    expect(ep.session.calls().map((c) => [c.fault, c.status, c.mutated])).toEqual([
      ['malformed_json', 200, true],
      ['partial_response', 200, true],
    ]);
  });

  it('success_without_effect: nothing / a normal result', async () => {
    const ep = await shop.episode({ faults: [rule({ tool: 'refund', fault: 'success_without_effect' })] });
    const client = await connect(ep.session);
    const result = await client.callTool({ name: 'refund', arguments: { order_id: 'ORD-1', amount: 40 } });
    expect(result.isError).toBeFalsy();
    expect(num((result.structuredContent as { result: { amount: unknown } }).result.amount)).toBe(40);
    expect(await refundCount(ep)).toBe(0);
  });

  it('marks an idempotent replay in _meta and applies the effect once', async () => {
    const ep = await shop.episode();
    const client = await connect(ep.session);
    const args = { order_id: 'ORD-1', amount: 40, idempotency_key: 'mcp-1' };
    const first = await client.callTool({ name: 'refund', arguments: args });
    const again = await client.callTool({ name: 'refund', arguments: args });
    expect(first._meta).toBeUndefined();
    expect(again._meta).toEqual({ 'stategate/replay': true });
    expect(again.structuredContent).toEqual(first.structuredContent);
    expect(await refundCount(ep)).toBe(1);
    expect(ep.session.calls().map((c) => [c.via, c.replay])).toEqual([
      ['mcp', false],
      ['mcp', true],
    ]);
  });

  it('HTTP and MCP calls share one record and one sequence', async () => {
    const ep = await shop.episode();
    const client = await connect(ep.session);
    await ep.post('lookup_order', { order_id: 'ORD-1' });
    await client.callTool({ name: 'lookup_order', arguments: { order_id: 'ORD-2' } });
    await ep.post('get_policy', {});
    expect(ep.session.calls().map((c) => [c.seq, c.via])).toEqual([
      [1, 'http'],
      [2, 'mcp'],
      [3, 'http'],
    ]);
  });

  it('refuses GET on the stateless endpoint and an unknown token', async () => {
    const ep = await shop.episode();
    const get = await fetch(ep.session.mcpUrl, { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    const wrong = new Client({ name: 'stategate-test', version: '1.0.0' });
    const url = new URL(ep.session.mcpUrl.replace(/\/e\/[0-9a-f]+/, `/e/${'f'.repeat(32)}`));
    await expect(wrong.connect(new StreamableHTTPClientTransport(url))).rejects.toThrow();
  });
});
