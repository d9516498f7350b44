// The MCP side of an episode (streamable HTTP, stateless: one SDK server and transport per request).
// tools/call goes through the same call path as HTTP; how each fault shows is in docs/mcp.md.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type CallReply, handleCall, type Wire } from './call.js';
import { gatewayError, sendJson, shapeWire, writeReply } from './http-json.js';
import { jsonDepth, MAX_JSON_DEPTH, readBody } from './request-body.js';
import type { SessionState } from './session.js';

// A tools/call request holds its arguments two levels down: { params: { arguments: ... } }.
const MAX_MCP_DEPTH = MAX_JSON_DEPTH + 2;

// Worst first: when one request carries several calls, the most broken wire wins.
const WIRE_RANK: Record<Wire, number> = { dropped: 3, truncated: 2, malformed: 1, json: 0 };

/** Serves one MCP request for an open session. */
export async function serveMcp(
  session: SessionState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  // Stateless: there is no server-initiated stream to GET and no session to DELETE.
  if (req.method !== 'POST') {
    return sendJson(
      res,
      405,
      gatewayError('METHOD_NOT_ALLOWED', 'This MCP endpoint is stateless: use POST.'),
      {
        allow: 'POST',
      },
    );
  }
  const read = await readBody(req, session.cutoff);
  const text = 'text' in read ? read.text : '';
  // Bodies the SDK must never see are answered here and recorded as calls of a tool not yet named.
  const refusal = 'text' in read ? bodyRefusal(text) : read;
  if (refusal) {
    return writeReply(req, res, await handleCall(session, { tool: '', body: refusal, via: 'mcp' }));
  }
  let wire = 'json' as Wire;
  const mcp = new McpServer({ name: 'stategate', version: '1' }, { capabilities: { tools: {} } });
  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: session.spec.tools.map((t) => ({
      name: t.name,
      description: t.description,
      // MCP requires an object schema at the top; twin inputs describe an arguments object.
      inputSchema: { ...t.input, type: 'object' as const },
    })),
  }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const reply = await handleCall(session, {
      tool: request.params.name,
      body: { value: request.params.arguments ?? {} },
      via: 'mcp',
    });
    if (WIRE_RANK[reply.wire] > WIRE_RANK[wire]) wire = reply.wire;
    return toolResult(reply);
  });
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  try {
    await mcp.connect(transport);
    const response = await transport.handleRequest(toWebRequest(req, text));
    const replyText = await response.text();
    if (wire === 'dropped') {
      req.socket.destroy();
      return;
    }
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const out = Buffer.from(replyText === '' ? '' : shapeWire(replyText, wire), 'utf8');
    headers['content-length'] = String(out.length);
    if (!res.headersSent && !res.destroyed) {
      res.writeHead(response.status, headers);
      res.end(out);
    }
  } finally {
    await mcp.close().catch(() => undefined);
  }
}

/** A body too deep, or not JSON at all, as the call path's input (the SDK then never parses it). */
function bodyRefusal(text: string): { json: string } | undefined {
  if (jsonDepth(text, MAX_MCP_DEPTH) > MAX_MCP_DEPTH) return { json: text };
  try {
    JSON.parse(text);
    return undefined;
  } catch {
    return { json: text };
  }
}

/** A call's reply as an MCP tool result: errors are results with isError, never protocol errors. */
export function toolResult(reply: CallReply): CallToolResult {
  const body = reply.body;
  if (body && 'error' in body) {
    const retryAfter = reply.headers['retry-after'];
    const structured = {
      status: reply.status,
      code: body.error.code,
      message: body.error.message,
      ...(retryAfter !== undefined ? { retry_after: Number(retryAfter) } : {}),
    };
    const suffix = retryAfter !== undefined ? ` (retry after ${retryAfter} s)` : '';
    return {
      isError: true,
      content: [{ type: 'text', text: `${reply.status} ${body.error.code}: ${body.error.message}${suffix}` }],
      structuredContent: structured,
    };
  }
  const result = body && 'result' in body ? body.result : null;
  return {
    content: [{ type: 'text', text: JSON.stringify(result) }],
    structuredContent: { result },
    ...(reply.headers['idempotent-replayed'] ? { _meta: { 'stategate/replay': true } } : {}),
  };
}

function toWebRequest(req: IncomingMessage, text: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, {
    method: 'POST',
    headers,
    body: text,
  });
}
