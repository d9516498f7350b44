// The two requests the agent-server adapter makes: "is anything listening?" and one episode POST.
// An episode's POST has a connection of its own (no keep-alive), so a restarted server never meets
// a dead pooled socket; a conversation's turns share one (conversationAgent()).
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { OutputCapture } from './capture.js';

/** Tries one TCP connection to the URL's origin; null when it was accepted, else the error code. */
export function tryConnect(url: URL, timeoutMs: number): Promise<string | null> {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (error: string | null) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(error);
    };
    const timer = setTimeout(() => done('ETIMEDOUT'), timeoutMs);
    socket.once('connect', () => done(null));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
}

export interface PostOutcome {
  /** The response status, when a response came. */
  status?: number;
  body: OutputCapture;
  /** A connection error or an incomplete response. */
  error?: string;
  timedOut: boolean;
  aborted: boolean;
}

export interface PostOptions {
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
  /** The conversation's connection (conversationAgent()); without it, a connection of its own. */
  agent?: http.Agent;
}

/**
 * One kept-alive connection for the turns of one conversation: each turn's POST would otherwise
 * open a connection, and through the sandbox's tunnel that is a control line and two connections
 * more per turn. Destroyed when the conversation ends.
 */
export function conversationAgent(url: URL): http.Agent {
  const options = { keepAlive: true, maxSockets: 1 };
  return url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
}

/** POSTs a JSON body and collects the response (capped); never throws. */
export async function postJson(url: URL, payload: unknown, opts: PostOptions): Promise<PostOutcome> {
  const body = Buffer.from(JSON.stringify(payload));
  const started = performance.now();
  const first = await postOnce(url, body, opts);
  // A kept-alive connection the server closed while idle (its keep-alive timeout) fails the next
  // request before any answer: that request is sent again, once, on a new connection, with what is
  // left of its time. A server that read the request and then broke the connection gains nothing by
  // it: the time is the same, and what it did meanwhile is in the database and the call log.
  const left = Math.floor(opts.timeoutMs - (performance.now() - started));
  if (first.staleSocket && left > 0 && !opts.signal?.aborted)
    return (await postOnce(url, body, { ...opts, timeoutMs: left })).outcome;
  return first.outcome;
}

function postOnce(
  url: URL,
  body: Buffer,
  opts: PostOptions,
): Promise<{ outcome: PostOutcome; staleSocket: boolean }> {
  const outcome: PostOutcome = { body: new OutputCapture(opts.maxBytes), timedOut: false, aborted: false };
  return new Promise((resolve) => {
    let settled = false;
    let staleSocket = false;
    const finish = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (error !== undefined) outcome.error = error;
      resolve({ outcome, staleSocket });
    };
    const request = (url.protocol === 'https:' ? https : http).request(
      url,
      {
        method: 'POST',
        agent: opts.agent ?? false,
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          accept: 'application/json',
        },
      },
      (response) => {
        outcome.status = response.statusCode;
        response.on('data', (chunk: Buffer) => outcome.body.push(chunk));
        response.on('end', () => finish());
        response.on('error', (err) => finish(err.message));
        response.on('close', () =>
          finish(response.complete ? undefined : 'the connection closed mid-response'),
        );
      },
    );
    // A 101 answer with no 'upgrade' listener: Node destroys the socket and emits nothing else.
    request.on('upgrade', (response, socket) => {
      outcome.status = response.statusCode;
      socket.destroy();
      finish(`the agent server answered HTTP ${response.statusCode} (a protocol switch), not a response`);
    });
    // Whatever else ends the request without an event above still ends the POST.
    request.on('close', () => finish('the connection closed before a response'));
    request.on('error', (err: NodeJS.ErrnoException) => {
      staleSocket =
        request.reusedSocket &&
        outcome.status === undefined &&
        !outcome.timedOut &&
        !outcome.aborted &&
        (err.code === 'ECONNRESET' || err.code === 'EPIPE');
      finish(err.code ?? err.message);
    });
    // Both end the POST themselves: destroying a request that is already destroyed emits nothing.
    const timer = setTimeout(() => {
      outcome.timedOut = true;
      request.destroy(new Error('timed out'));
      finish('timed out');
    }, opts.timeoutMs);
    const onAbort = () => {
      outcome.aborted = true;
      request.destroy(new Error('aborted'));
      finish('aborted');
    };
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    request.end(body);
  });
}
