#!/usr/bin/env node
// The demo refund agent as a long-lived HTTP server (agent.url): POST / with the stdin object plus
// tools_url, mcp_url, episode and seed; the response is the result object. Same planner as agent.mjs.
// It listens on PORT, which Stategate sets for agent.serve when agent.url says {port}:
//   agent: { url: "http://127.0.0.1:{port}/", serve: node examples/refund-agent/server.mjs }
import { createServer } from 'node:http';
import { httpTools } from './http-tools.mjs';
import { loadManifest } from './manifest.mjs';
import { planRefund } from './planner.mjs';
import { checkInput } from './protocol.mjs';

const MAX_BODY = 1 << 20;

/** Reads a request body up to MAX_BODY bytes. */
async function readBody(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY) throw new Error(`request body over ${MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

const directives = await loadManifest(new URL('.', import.meta.url));

const server = createServer(async (req, res) => {
  if (req.method === 'GET' && (req.url === '/' || req.url === '/health')) {
    return send(res, 200, { ok: true, agent: directives.name, version: directives.version });
  }
  if (req.method !== 'POST' || req.url !== '/') return send(res, 404, { error: 'POST / with an episode' });
  let text;
  try {
    text = await readBody(req);
  } catch (err) {
    return send(res, 413, { error: err.message });
  }
  let body;
  try {
    body = JSON.parse(text);
  } catch (err) {
    return send(res, 400, { error: `the request body is not JSON: ${err.message}` });
  }
  let input;
  try {
    input = checkInput(body);
    if (typeof body.tools_url !== 'string' || !/^https?:\/\//.test(body.tools_url)) {
      throw new Error('"tools_url" must be an http(s) URL');
    }
  } catch (err) {
    return send(res, 400, { error: err.message });
  }
  try {
    const result = await planRefund({
      message: input.message,
      context: input.context,
      directives,
      tools: httpTools(body.tools_url),
    });
    send(res, 200, result);
  } catch (err) {
    send(res, 500, { error: `the planner failed: ${err.message}` });
  }
});

const port = Number(process.env.PORT ?? 8787);
const host = process.env.HOST ?? '127.0.0.1';
server.listen(port, host, () => {
  process.stdout.write(
    `refund-agent ${directives.version} listening on http://${host}:${server.address().port}/\n`,
  );
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
