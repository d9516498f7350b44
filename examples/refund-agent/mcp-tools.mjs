// The tool transport over MCP: a connected client of the official SDK. An isError result carries
// structuredContent {status, code, message}; a thrown error (dropped connection, broken body) is a failed call.
import { failedCall } from './http-tools.mjs';

/** Turns a successful CallToolResult into the tool's result value. */
function resultValue(res) {
  const structured = res.structuredContent;
  if (structured && typeof structured === 'object') {
    const keys = Object.keys(structured);
    return keys.length === 1 && keys[0] === 'result' ? structured.result : structured;
  }
  const text = (res.content ?? []).find((c) => c.type === 'text')?.text;
  if (text === undefined) return null;
  return JSON.parse(text);
}

/** Returns a transport that calls the tools through a connected MCP client. */
export function mcpTools(client) {
  return {
    async listTools() {
      try {
        return (await client.listTools()).tools.map((t) => t.name);
      } catch {
        return null;
      }
    },
    async call(name, args) {
      let res;
      try {
        res = await client.callTool({ name, arguments: args });
      } catch (err) {
        // A dropped connection or a broken body surfaces as a thrown error: the call failed.
        return failedCall(0, 'CONNECTION_FAILED', err.message);
      }
      if (res.isError) {
        const e = res.structuredContent ?? {};
        const status = Number.isInteger(e.status) ? e.status : 0;
        const text = (res.content ?? []).find((c) => c.type === 'text')?.text ?? '';
        const retryAfter = Number.isFinite(e.retry_after) ? Math.round(e.retry_after * 1000) : null;
        return failedCall(status, String(e.code ?? 'TOOL_ERROR'), String(e.message ?? text), retryAfter);
      }
      try {
        return { ok: true, status: 200, result: resultValue(res) };
      } catch (err) {
        return failedCall(200, 'INVALID_RESPONSE', `unparsable tool result: ${err.message}`, null, true);
      }
    },
  };
}
