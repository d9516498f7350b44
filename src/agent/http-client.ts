// The two requests the agent-server adapter makes: "is anything listening?" and one episode POST.
// node:http with no keep-alive, so a restarted server never meets a dead pooled socket.
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
}

/** POSTs a JSON body and collects the response (capped); never throws. */
export function postJson(url: URL, payload: unknown, opts: PostOptions): Promise<PostOutcome> {
  const body = Buffer.from(JSON.stringify(payload));
  const outcome: PostOutcome = { body: new OutputCapture(opts.maxBytes), timedOut: false, aborted: false };
  return new Promise((resolve) => {
    let settled = false;
    const finish = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (error !== undefined) outcome.error = error;
      resolve(outcome);
    };
    const request = (url.protocol === 'https:' ? https : http).request(
      url,
      {
        method: 'POST',
        agent: false,
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
    request.on('error', (err: NodeJS.ErrnoException) => finish(err.code ?? err.message));
    const timer = setTimeout(() => {
      outcome.timedOut = true;
      request.destroy(new Error('timed out'));
    }, opts.timeoutMs);
    const onAbort = () => {
      outcome.aborted = true;
      request.destroy(new Error('aborted'));
    };
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    request.end(body);
  });
}
