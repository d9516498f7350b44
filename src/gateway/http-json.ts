// The plain HTTP JSON side of an episode (docs/agent-protocol.md): `GET /tools` and `POST /tools/NAME`,
// and how a reply goes on the wire, including the broken ones that faults ask for.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Tool } from '../config/schema.js';
import { type CallReply, handleCall } from './call.js';
import { readBody } from './request-body.js';
import type { SessionState } from './session.js';

export { MAX_BODY_BYTES, readBody } from './request-body.js';

/** The tool list as the HTTP side shows it. */
export function toolList(tools: Iterable<Tool>): {
  tools: { name: string; description: string; input_schema: unknown }[];
} {
  return {
    tools: [...tools].map((t) => ({ name: t.name, description: t.description, input_schema: t.input })),
  };
}

/** Serves `rest` (the path after `/e/TOKEN`) for an open session. */
export async function serveJson(
  session: SessionState,
  rest: string,
  req: IncomingMessage,
  res: ServerResponse,
) {
  if (rest === '/tools') {
    if (req.method !== 'GET')
      return sendJson(res, 405, gatewayError('METHOD_NOT_ALLOWED', 'Use GET.'), { allow: 'GET' });
    return sendJson(res, 200, toolList(session.spec.tools));
  }
  const name = rest.startsWith('/tools/') ? decodeName(rest.slice('/tools/'.length)) : undefined;
  if (name === undefined || name === '' || name.includes('/')) {
    return sendJson(res, 404, gatewayError('NOT_FOUND', 'Use GET /tools or POST /tools/NAME.'));
  }
  if (req.method !== 'POST')
    return sendJson(res, 405, gatewayError('METHOD_NOT_ALLOWED', 'Use POST.'), { allow: 'POST' });
  const body = await readBody(req, session.cutoff);
  const reply = await handleCall(session, {
    tool: name,
    body: 'text' in body ? { json: body.text } : body,
    via: 'http',
  });
  writeReply(req, res, reply);
}

function decodeName(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/** Sends a call's reply as the fault (if any) wants it to arrive. */
export function writeReply(req: IncomingMessage, res: ServerResponse, reply: CallReply): void {
  if (reply.wire === 'dropped') {
    req.socket.destroy();
    return;
  }
  sendText(res, reply.status, shapeWire(JSON.stringify(reply.body), reply.wire), reply.headers);
}

/** The body text as it travels: whole, cut in half mid-JSON, or with a syntax error. */
export function shapeWire(text: string, wire: CallReply['wire']): string {
  if (wire === 'truncated') return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
  // A trailing comma before the closing brace: looks like JSON, parses as nothing.
  if (wire === 'malformed') return text.endsWith('}') ? `${text.slice(0, -1)},}` : `${text},`;
  return text;
}

/** A gateway-level error body (not a tool's). */
export function gatewayError(code: string, message: string) {
  return { error: { code, message } };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  sendText(res, status, JSON.stringify(body), headers);
}

function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string>) {
  if (res.headersSent || res.destroyed) return;
  const bytes = Buffer.from(text, 'utf8');
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(bytes.length),
    'cache-control': 'no-store',
  });
  res.end(bytes);
}
