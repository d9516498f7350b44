#!/usr/bin/env node
// The demo refund agent taking its tools through MCP (streamable HTTP on STATEGATE_MCP_URL) with the
// official client. Same stdin, stdout and planner as agent.mjs; only the transport differs.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadManifest } from './manifest.mjs';
import { mcpTools } from './mcp-tools.mjs';
import { planRefund } from './planner.mjs';
import { parseInput, printResult, readStdin } from './protocol.mjs';

let client;
try {
  const mcpUrl = process.env.STATEGATE_MCP_URL;
  if (!mcpUrl) throw new Error('STATEGATE_MCP_URL is not set: run this agent under stategate');
  const { message, context } = parseInput(await readStdin());
  const directives = await loadManifest(new URL('.', import.meta.url));
  client = new Client({ name: directives.name, version: directives.version });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  printResult(await planRefund({ message, context, directives, tools: mcpTools(client) }));
} catch (err) {
  process.stderr.write(`refund-agent (mcp): ${err.message}\n`);
  process.exitCode = 1;
} finally {
  await client?.close().catch(() => {});
}
