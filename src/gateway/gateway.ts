// The twin tool server and the model gateway: one node:http server on loopback, one unguessable URL
// per episode (docs/agent-protocol.md, docs/models.md). Requests under an unknown token are refused alike and kept for the record.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RefusedCall } from '../model/episode.js';
import { gatewayError, sendJson, serveJson } from './http-json.js';
import { serveMcp } from './mcp.js';
import { serveModel } from './model-proxy.js';
import { modelEnv } from './model-session.js';
import { RecentSet } from './recent-set.js';
import { SessionState } from './session.js';
import type { EpisodeSession, Gateway, SessionSpec } from './types.js';

export interface GatewayOptions {
  /** Default 127.0.0.1: the agent runs on the same machine. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** How many recently closed tokens keep the reason "the episode is closed" (default 1,024). */
  closedTokensKept?: number;
  /** How many refused requests are kept in full (default 1,000; all are counted). */
  refusedKept?: number;
  /** How long a closing session waits for calls in flight before cutting them off (default 1,000 ms). */
  closeGraceMs?: number;
  /** A request's headers must arrive within this (default 10 s): slow headers hold no socket for long. */
  headersTimeoutMs?: number;
  /** A whole request must arrive within this (default 120 s); an episode's deadline cuts sooner. */
  requestTimeoutMs?: number;
}

// One body for every unknown token, so a reply never tells which tokens exist.
const UNKNOWN_EPISODE = gatewayError('NOT_FOUND', 'There is nothing here.');
const EPISODE_PATH = /^\/e\/([^/?#]+)(\/[^?#]*)?$/;
// The model gateway shares the listener (and so every forwarded socket): /m/TOKEN/NAME/v1/...
const MODEL_PATH = /^\/m\/([^/?#]+)\/([^/?#]+)(\/[^?#]*)?$/;

/** Starts the gateway's HTTP server and returns it once it listens. */
export async function createGateway(opts: GatewayOptions = {}): Promise<Gateway> {
  const host = opts.host ?? '127.0.0.1';
  const sessions = new Map<string, SessionState>();
  // Memory must not grow with the episodes: only recent closed tokens are remembered (a closed and
  // an unknown token get the same 404 body; the reason in the record is the only difference).
  const closedTokens = new RecentSet<string>(opts.closedTokensKept ?? 1024);
  const refused: RefusedCall[] = [];
  const refusedKept = opts.refusedKept ?? 1000;
  let refusedCount = 0;

  const refuse = (req: IncomingMessage, res: ServerResponse, path: string, reason: string) => {
    refusedCount++;
    if (refused.length < refusedKept) {
      refused.push({
        at: new Date().toISOString(),
        path,
        status: 404,
        reason: `${req.method ?? '?'}: ${reason}`,
      });
    }
    // Drain the body so a keep-alive connection stays usable.
    req.resume();
    sendJson(res, 404, UNKNOWN_EPISODE);
  };

  const route = async (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    const model = MODEL_PATH.exec(path);
    if (model)
      return routeModel(req, res, model[1], model[2], model[3] ?? '', queryAt < 0 ? '' : url.slice(queryAt));
    const match = EPISODE_PATH.exec(path);
    if (!match) return refuse(req, res, path, 'not an episode URL');
    const token = match[1];
    const session = sessions.get(token);
    if (!session) {
      const reason = closedTokens.has(token) ? 'the episode is closed' : 'unknown episode token';
      return refuse(req, res, path, reason);
    }
    const rest = match[2] ?? '';
    // When the session is cut off, the request's connection goes at once: the agent gets no reply.
    const onCut = () => req.socket.destroy();
    session.cutoff.addEventListener('abort', onCut, { once: true });
    const work = rest === '/mcp' ? serveMcp(session, req, res) : serveJson(session, rest, req, res);
    try {
      await session.track(work);
    } finally {
      session.cutoff.removeEventListener('abort', onCut);
    }
  };

  const routeModel = async (
    req: IncomingMessage,
    res: ServerResponse,
    token: string,
    name: string,
    rest: string,
    query: string,
  ) => {
    const session = sessions.get(token);
    // A closed, unknown or model-less episode looks the same from outside: nothing is here.
    if (!session?.models) {
      const reason = closedTokens.has(token)
        ? 'the episode is closed'
        : session
          ? 'no models'
          : 'unknown episode token';
      return refuse(req, res, `/m/…/${name}${rest}`, reason);
    }
    const models = session.models;
    const onCut = () => req.socket.destroy();
    session.cutoff.addEventListener('abort', onCut, { once: true });
    try {
      await session.track(serveModel(models, name, rest, query, req, res, session.cutoff));
    } finally {
      session.cutoff.removeEventListener('abort', onCut);
    }
  };

  const headersTimeout = opts.headersTimeoutMs ?? 10_000;
  const server = createServer(
    {
      headersTimeout,
      requestTimeout: Math.max(opts.requestTimeoutMs ?? 120_000, headersTimeout),
      // How often those two are checked (Node's default, 30 s, would let a slow request overstay).
      connectionsCheckingInterval: Math.min(1_000, headersTimeout),
    },
    (req, res) => {
      route(req, res).catch((err: unknown) => {
        // Transport failures (a client gone mid-request) end that request, never the server.
        if (!res.headersSent && !res.destroyed) {
          sendJson(res, 500, gatewayError('GATEWAY_ERROR', err instanceof Error ? err.message : String(err)));
        }
      });
    },
  );
  server.on('clientError', (_err, socket) => socket.destroy());
  // Idle keep-alive connections outlive common client pool expiries (4 to 5 s), so the client
  // closes first and never sends a request on a socket the server is closing.
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A deep accept queue: an agent may open hundreds of connections at once.
    server.listen({ port: opts.port ?? 0, host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  const closeSession = async (token: string) => {
    const session = sessions.get(token);
    if (!session) return;
    sessions.delete(token);
    closedTokens.add(token);
    await session.close(opts.closeGraceMs ?? 1_000);
  };

  return {
    port,
    open(spec: SessionSpec): EpisodeSession {
      // 128 random bits; hex keeps the URL plain.
      const token = randomBytes(16).toString('hex');
      const session = new SessionState(token, spec);
      sessions.set(token, session);
      const toolsUrl = `http://${urlHost}:${port}/e/${token}`;
      const models = session.models;
      let env: Record<string, string> = {};
      try {
        if (models) env = modelEnv(`http://${urlHost}:${port}/m/${token}`, models.spec, models.key);
      } catch (err) {
        sessions.delete(token);
        throw err;
      }
      let closing: Promise<void> | undefined;
      return {
        toolsUrl,
        mcpUrl: `${toolsUrl}/mcp`,
        modelEnv: env,
        calls: () => session.calls(),
        modelCalls: () => models?.calls() ?? [],
        close: () => {
          closing ??= closeSession(token);
          return closing;
        },
      };
    },
    refused: () => [...refused],
    refusedCount: () => refusedCount,
    sizes: () => ({ sessions: sessions.size, closedTokens: closedTokens.size, refused: refused.length }),
    async close() {
      await Promise.all([...sessions.keys()].map(closeSession));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
