// The model gateway's forwarding (docs/models.md): an agent's request under /m/TOKEN/NAME/v1/... goes
// to the provider's url with the real key in place of the episode's, and the response comes back
// byte for byte, streams included, while the usage it reports is read on the way through.
import {
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ModelCallRecord } from '../model/episode.js';
import { costUsd, type ModelApi, type ModelUsage } from '../model/model-usage.js';
import type { FiredModelFault, ModelSession } from './model-session.js';
import { readBody } from './request-body.js';
import { parseObject, usageReader } from './response-usage.js';
import type { ModelRoute } from './types.js';

/** Model request bodies above this get 413 (long contexts and images are large, but not unbounded). */
export const MAX_MODEL_BODY_BYTES = 32 * 1024 * 1024;

// Never forwarded either way: the connection's own, and the credentials the gateway replaces.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'content-length',
  'authorization',
  'x-api-key',
  'api-key',
  'accept-encoding',
]);

const DEFAULT_MESSAGES: Record<string, string> = {
  rate_limited: 'Rate limit reached for requests.',
  server_error: 'The server had an error while processing your request.',
  unavailable: 'The server is overloaded or not ready yet.',
  timeout: 'The request timed out.',
  budget_exceeded: "The episode's model budget (budget.episode_usd) is spent.",
  wrong_key: 'This key is not valid for this episode.',
};

/** An error body in the provider's own shape, so the agent's SDK raises what it would raise. */
export function providerError(api: ModelApi, type: string, message: string): string {
  return JSON.stringify(
    api === 'anthropic'
      ? { type: 'error', error: { type, message } }
      : { error: { message, type, code: type } },
  );
}

/** The key the agent presented: `Authorization: Bearer KEY` or `x-api-key: KEY`. */
export function presentedKey(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^bearer /i.test(auth)) return auth.slice(7).trim();
  const key = req.headers['x-api-key'];
  return typeof key === 'string' ? key : undefined;
}

interface CallState {
  record: ModelCallRecord;
  t0: number;
}

/**
 * Serves one model request of an open session: `rest` is the path after `/m/TOKEN/NAME`, `query`
 * the request's query string (kept). Records the call in `models`; never throws on the agent's input.
 */
export async function serveModel(
  models: ModelSession,
  name: string,
  rest: string,
  query: string,
  req: IncomingMessage,
  res: ServerResponse,
  cutoff: AbortSignal,
): Promise<void> {
  const route = Object.hasOwn(models.spec.providers, name) ? models.spec.providers[name] : undefined;
  if (!route) {
    req.resume();
    return send(res, 404, providerError('openai', 'not_found', `No model provider named ${name} here.`));
  }
  const path = rest.startsWith('/v1/') && !escapesBase(rest) ? rest.slice(3) : undefined;
  const call: CallState = {
    t0: performance.now(),
    record: {
      seq: models.nextSeq(),
      provider: name,
      path: path ?? rest,
      model: null,
      stream: false,
      status: 0,
      startedAt: new Date().toISOString(),
      latencyMs: 0,
      usage: null,
      costUsd: null,
    },
  };
  const finish = (status: number, extra: Partial<ModelCallRecord> = {}) => {
    Object.assign(call.record, extra);
    call.record.status = status;
    call.record.latencyMs = Math.round((performance.now() - call.t0) * 100) / 100;
    models.record(call.record);
  };
  if (!models.keyMatches(presentedKey(req))) {
    req.resume();
    send(res, 401, providerError(route.api, 'authentication_error', DEFAULT_MESSAGES.wrong_key));
    return finish(401, { fault: 'wrong_key' });
  }
  if (path === undefined) {
    req.resume();
    send(
      res,
      404,
      providerError(route.api, 'not_found', 'Model routes are under /v1/, without dot segments.'),
    );
    return finish(404, { error: 'not under /v1/ (or with a dot segment)' });
  }
  const read = await readBody(req, cutoff, MAX_MODEL_BODY_BYTES);
  if ('tooLarge' in read) {
    send(res, 413, providerError(route.api, 'request_too_large', 'The request body is too large.'));
    return finish(413, { error: `a ${read.tooLarge}-byte body (the gateway takes ${MAX_MODEL_BODY_BYTES})` });
  }
  if ('cutOff' in read) return finish(499, { error: `the request never arrived: ${read.cutOff.reason}` });
  let body: Buffer = Buffer.from(read.text, 'utf8');
  const json = parseObject(read.text);
  if (json) {
    if (typeof json.model === 'string') call.record.model = json.model;
    call.record.stream = json.stream === true;
    const withUsage = askStreamUsage(route.api, path, json);
    if (withUsage) body = Buffer.from(JSON.stringify(withUsage), 'utf8');
  }

  const callNumber = models.nextCallNumber(name);
  if (models.overBudget()) {
    send(res, 429, providerError(route.api, 'budget_exceeded', DEFAULT_MESSAGES.budget_exceeded));
    return finish(429, { fault: 'budget_exceeded' });
  }
  const fired = models.pickFault(name, callNumber, json);
  if (fired) {
    call.record.fault = fired.rule.fault;
    const shown = await applyModelFault(fired, route.api, res, cutoff, models.spec.timeoutMs);
    if (shown !== 'forward') return finish(shown.status, shown.error ? { error: shown.error } : {});
  }
  await forward(route, path + query, req, body, res, call, cutoff);
  finish(call.record.status, {});
}

/**
 * Whether a path has a dot segment (`..`, `.`, also percent-encoded): resolved, it would leave the
 * provider's base path and carry the real key to another path of the same host.
 */
function escapesBase(path: string): boolean {
  return path.split('/').some((segment) => {
    let s = segment;
    try {
      s = decodeURIComponent(segment);
    } catch {
      return true;
    }
    return s === '.' || s === '..' || s.includes('/') || s.includes('\\');
  });
}

/** OpenAI chat streams report usage only when asked: the gateway asks (and the agent gets the extra final chunk). */
function askStreamUsage(
  api: ModelApi,
  path: string,
  json: Record<string, unknown>,
): Record<string, unknown> | undefined {
  if (api !== 'openai' || path !== '/chat/completions' || json.stream !== true) return undefined;
  const options = json.stream_options;
  if (
    options !== null &&
    typeof options === 'object' &&
    (options as Record<string, unknown>).include_usage === true
  )
    return undefined;
  return { ...json, stream_options: { ...(options as object | undefined), include_usage: true } };
}

type FaultShown = 'forward' | { status: number; error?: string };

/** Shows the agent what the fault says the provider did; `forward` when the call goes on (delay). */
async function applyModelFault(
  fired: FiredModelFault,
  api: ModelApi,
  res: ServerResponse,
  cutoff: AbortSignal,
  timeoutMs: number | undefined,
): Promise<FaultShown> {
  const { rule } = fired;
  const message = rule.message ?? DEFAULT_MESSAGES[rule.fault];
  const retryAfter =
    rule.fault === 'rate_limited' || rule.fault === 'unavailable' ? (rule.retry_after ?? 1) : undefined;
  const headers: Record<string, string> =
    retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) };
  switch (rule.fault) {
    case 'rate_limited':
      send(
        res,
        429,
        providerError(api, api === 'anthropic' ? 'rate_limit_error' : 'rate_limit_exceeded', message),
        headers,
      );
      return { status: 429 };
    case 'server_error':
      send(res, 500, providerError(api, api === 'anthropic' ? 'api_error' : 'server_error', message));
      return { status: 500 };
    case 'unavailable':
      send(
        res,
        503,
        providerError(api, api === 'anthropic' ? 'overloaded_error' : 'service_unavailable', message),
        headers,
      );
      return { status: 503 };
    case 'timeout': {
      // The provider never answers in time: held until delay_ms (or the episode's end), then 504.
      const held = rule.delay_ms ?? timeoutMs;
      const ended = await sleep(held, cutoff);
      if (ended) return { status: 499, error: 'the episode ended while the timeout fault held the call' };
      send(res, 504, providerError(api, 'timeout', message));
      return { status: 504 };
    }
    case 'dropped_connection':
      res.socket?.destroy();
      return { status: 0 };
    case 'malformed_json':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        '{"id": "malformed", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assi',
      );
      return { status: 200 };
    case 'delay': {
      const ended = await sleep(rule.delay_ms ?? 1000, cutoff);
      return ended
        ? { status: 499, error: 'the episode ended while the delay fault held the call' }
        : 'forward';
    }
  }
}

/** Sends the request to the provider and the response back to the agent, reading usage as it passes. */
function forward(
  route: ModelRoute,
  pathAndQuery: string,
  req: IncomingMessage,
  body: Buffer,
  res: ServerResponse,
  call: CallState,
  cutoff: AbortSignal,
): Promise<void> {
  const target = new URL(route.url.replace(/\/+$/, '') + pathAndQuery);
  const headers: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) headers[k] = v;
  // Usage is read from the bytes as they pass: they must come uncompressed.
  headers['accept-encoding'] = 'identity';
  headers['content-length'] = String(body.length);
  if (route.key !== undefined) {
    if (route.api === 'anthropic') headers['x-api-key'] = route.key;
    else headers.authorization = `Bearer ${route.key}`;
  }
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<void>((resolve) => {
    let done = false;
    const end = (status: number, error?: string) => {
      if (done) return;
      done = true;
      call.record.status = status;
      if (error) call.record.error = error;
      resolve();
    };
    const upstream = send(target, { method: req.method, headers, signal: cutoff }, (answer) => {
      const status = answer.statusCode ?? 502;
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(answer.headers))
        if (v !== undefined && (!HOP_BY_HOP.has(k) || k === 'content-length'))
          out[k] = v as string | string[];
      res.writeHead(status, out);
      const reader = usageReader(route.api, String(answer.headers['content-type'] ?? ''));
      answer.on('data', (chunk: Buffer) => {
        call.record.firstByteMs ??= Math.round((performance.now() - call.t0) * 100) / 100;
        reader.push(chunk);
        if (!res.write(chunk)) {
          answer.pause();
          res.once('drain', () => answer.resume());
        }
      });
      answer.on('end', () => {
        res.end();
        settleUsage(route, call, reader.done());
        end(status);
      });
      answer.on('error', (err) => {
        settleUsage(route, call, reader.done());
        res.destroy();
        end(status, `the provider's response broke off: ${err.message}`);
      });
      res.on('close', () => {
        if (res.writableFinished) return;
        upstream.destroy();
        settleUsage(route, call, reader.done());
        end(499, 'the agent closed the connection before the response ended');
      });
    });
    upstream.on('error', (err) => {
      if (done) return;
      if (cutoff.aborted) return end(499, `cut off: ${String(cutoff.reason)}`);
      if (!res.headersSent) {
        send502(res, route.api, target.origin, err);
        call.record.unreachable = true;
        end(502, `the provider at ${target.origin} could not be reached: ${err.message}`);
      } else {
        res.destroy();
        end(call.record.status || 502, `the provider's response broke off: ${err.message}`);
      }
    });
    upstream.end(body);
  });
}

function send502(res: ServerResponse, api: ModelApi, origin: string, err: Error) {
  send(
    res,
    502,
    providerError(
      api,
      'gateway_error',
      `Stategate could not reach the provider at ${origin}: ${err.message}`,
    ),
  );
}

function settleUsage(route: ModelRoute, call: CallState, seen: { usage?: ModelUsage; model?: string }) {
  if (seen.model) call.record.model = seen.model;
  if (!seen.usage) return;
  call.record.usage = seen.usage;
  const usd = call.record.model === null ? undefined : costUsd(route.prices, call.record.model, seen.usage);
  call.record.costUsd = usd === undefined ? null : usd;
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/** Waits `ms` (forever when undefined) unless `signal` aborts first; true when it aborted. */
function sleep(ms: number | undefined, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(true);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer =
      ms === undefined
        ? undefined
        : setTimeout(() => {
            signal.removeEventListener('abort', onAbort);
            resolve(false);
          }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
