// Bench 4: the gateway alone on one episode's sandbox: calls per second and latency of a read and a
// write tool, over plain HTTP and over MCP with the official SDK client, at concurrency 1 and 8.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createGateway } from '../src/gateway/index.js';
import { loadPinnedSuite } from '../src/run/load.js';
import { createPostgresEngine } from '../src/sandbox/postgres.js';
import { ADMIN_URL, benchSuite, summary } from './suite.js';

export interface GatewayResult {
  via: 'http' | 'mcp';
  tool: 'get_item' | 'bump';
  concurrency: number;
  calls: number;
  perSecond: number;
  p50: number;
  p99: number;
}

type Caller = (tool: string, id: number) => Promise<void>;

async function drive(call: Caller, tool: string, calls: number, concurrency: number) {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < calls) {
      const i = next++;
      const s = performance.now();
      await call(tool, 1 + (i % 1000));
      latencies.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const s = summary(latencies);
  return { perSecond: calls / seconds, p50: s.median, p99: s.p99 };
}

/** Measures both tools over both protocols at concurrency 1 and 8, `calls` calls per cell. */
export async function gatewayBench(calls: number): Promise<GatewayResult[]> {
  const suite = benchSuite(1000, 1);
  const engine = await createPostgresEngine({ adminUrl: ADMIN_URL });
  const gateway = await createGateway();
  try {
    const loaded = await loadPinnedSuite(join(suite.dir, 'stategate.yml'));
    const template = await engine.buildTemplate(loaded.template);
    const sandbox = await template.clone('gateway-bench');
    const session = gateway.open({
      episode: 'bench',
      scenario: loaded.scenarios[0].id,
      side: 'head',
      seed: 1,
      tools: [...loaded.tools.values()],
      faults: [],
      sandbox,
    });
    const http: Caller = async (tool, id) => {
      const res = await fetch(`${session.toolsUrl}/tools/${tool}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id }),
      });
      if (res.status !== 200) throw new Error(`bench: ${tool} answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };
    const client = new Client({ name: 'stategate-bench', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcpUrl)));
    const mcp: Caller = async (tool, id) => {
      const r = await client.callTool({ name: tool, arguments: { id } });
      if (r.isError) throw new Error(`bench: ${tool} over MCP failed: ${JSON.stringify(r.content)}`);
    };
    const results: GatewayResult[] = [];
    for (const [via, call] of [
      ['http', http],
      ['mcp', mcp],
    ] as const) {
      await drive(call, 'get_item', 50, 4); // warm up
      for (const tool of ['get_item', 'bump'] as const) {
        for (const concurrency of [1, 8]) {
          results.push({ via, tool, concurrency, calls, ...(await drive(call, tool, calls, concurrency)) });
        }
      }
    }
    await client.close();
    await session.close();
    await sandbox.dispose();
    return results;
  } finally {
    await gateway.close();
    await engine.close();
    rmSync(suite.dir, { recursive: true, force: true });
  }
}
