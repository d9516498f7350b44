// Attack: request bodies built to crash the gateway or slip past its record: 100,000-deep JSON
// (over HTTP and MCP), bodies over the size cap, and bodies that are not JSON. Each must get a 4xx,
// be recorded as a call, and leave the gateway serving the next call.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { num, openShop, post, type Shop } from '../gateway/fixture.js';

let shop: Shop;
beforeAll(async () => {
  shop = await openShop();
}, 300_000);
afterAll(async () => {
  await shop?.close();
}, 300_000);

const DEEP = 100_000;
const deepArray = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

/** An MCP tools/call request as raw JSON-RPC text, with `args` spliced in as given. */
function mcpCall(argsText: string): string {
  return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_note","arguments":${argsText}}}`;
}

async function postMcp(url: string, body: string) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body,
  });
  return { status: res.status, text: await res.text() };
}

describe('deep JSON over HTTP', () => {
  it('refuses a 100,000-deep body with 400 BODY_TOO_DEEP, records it, and keeps serving', async () => {
    const ep = await shop.episode();
    for (const body of [
      deepArray(DEEP),
      '{"a":'.repeat(DEEP) + '1' + '}'.repeat(DEEP),
      '['.repeat(DEEP), // never closed
    ]) {
      const res = await ep.post('add_note', body);
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('BODY_TOO_DEEP');
    }
    const ok = await ep.post('add_note', { body: 'after the deep ones' });
    expect(ok.status).toBe(200);
    const calls = ep.session.calls();
    expect(calls.map((c) => [c.tool, c.status, c.error?.code ?? null])).toEqual([
      ['add_note', 400, 'BODY_TOO_DEEP'],
      ['add_note', 400, 'BODY_TOO_DEEP'],
      ['add_note', 400, 'BODY_TOO_DEEP'],
      ['add_note', 200, null],
    ]);
    expect(calls.slice(0, 3).every((c) => c.args === null && !c.mutated)).toBe(true);
    expect(num(await ep.scalar('SELECT count(*) FROM notes'))).toBe(1);
  });

  it('counts depth on structure only: 64 levels pass, 65 do not, brackets inside strings do not count', async () => {
    const ep = await shop.episode();
    // The arguments object is level 1, so `extra` may hold 63 more.
    const at64 = await ep.post('add_note', `{"body":"a","extra":${deepArray(63)}}`);
    const at65 = await ep.post('add_note', `{"body":"b","extra":${deepArray(64)}}`);
    const inString = await ep.post('add_note', { body: `[{\\"${'['.repeat(DEEP)}` });
    expect([at64.status, at65.status, inString.status]).toEqual([200, 400, 200]);
    expect(at65.json.error.code).toBe('BODY_TOO_DEEP');
    expect(ep.session.calls().map((c) => c.status)).toEqual([200, 400, 200]);
  });

  it('records bodies over 1 MiB (413) and bodies that are not JSON (400) as calls', async () => {
    const ep = await shop.episode();
    const big = await ep.post('add_note', { body: 'x'.repeat(2 * 1024 * 1024) });
    const broken = await ep.post('add_note', '{"body": "unterminated');
    const ok = await ep.post('add_note', { body: 'still here' });
    expect([big.status, broken.status, ok.status]).toEqual([413, 400, 200]);
    expect(ep.session.calls().map((c) => [c.tool, c.status, c.error?.code ?? null])).toEqual([
      ['add_note', 413, 'PAYLOAD_TOO_LARGE'],
      ['add_note', 400, 'INVALID_JSON'],
      ['add_note', 200, null],
    ]);
  });
});

describe('deep JSON over MCP', () => {
  it('refuses a 100,000-deep tools/call before the MCP server parses it, records it, and keeps serving', async () => {
    const ep = await shop.episode();
    const deep = await postMcp(ep.session.mcpUrl, mcpCall(deepArray(DEEP)));
    expect(deep.status).toBe(400);
    expect(JSON.parse(deep.text).error.code).toBe('BODY_TOO_DEEP');
    const broken = await postMcp(ep.session.mcpUrl, '{"jsonrpc":"2.0",');
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.text).error.code).toBe('INVALID_JSON');
    const big = await postMcp(ep.session.mcpUrl, mcpCall(JSON.stringify({ body: 'y'.repeat(2 << 20) })));
    expect(big.status).toBe(413);

    const client = new Client({ name: 'deep-json-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(ep.session.mcpUrl)));
    try {
      const result = await client.callTool({ name: 'add_note', arguments: { body: 'after' } });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const calls = ep.session.calls();
    expect(calls.map((c) => [c.via, c.tool, c.status, c.error?.code ?? null])).toEqual([
      ['mcp', '', 400, 'BODY_TOO_DEEP'],
      ['mcp', '', 400, 'INVALID_JSON'],
      ['mcp', '', 413, 'PAYLOAD_TOO_LARGE'],
      ['mcp', 'add_note', 200, null],
    ]);
    expect(num(await ep.scalar('SELECT count(*) FROM notes'))).toBe(1);
  });

  it('lets arguments 64 levels deep through to the tool, as over HTTP', async () => {
    const ep = await shop.episode();
    const res = await postMcp(ep.session.mcpUrl, mcpCall(`{"body":"c","extra":${deepArray(63)}}`));
    expect(res.status).toBe(200);
    expect(ep.session.calls().map((c) => [c.tool, c.status])).toEqual([['add_note', 200]]);
  });
});

describe('the gateway after the attacks', () => {
  it('still answers a plain call on a fresh episode', async () => {
    const ep = await shop.episode();
    const res = await post(`${ep.session.toolsUrl}/tools/lookup_order`, { order_id: 'ORD-1' });
    expect(res.status).toBe(200);
    expect(res.json.result.id).toBe('ORD-1');
  });
});
