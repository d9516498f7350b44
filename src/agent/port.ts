// Ports of agent servers: `{port}` in agent.url is a free port Stategate picks for each side (its
// serve gets it as PORT), so two checkouts of one stategate.yml never share a server.
import net from 'node:net';
import type { AgentConfig } from '../config/schema.js';
import type { Side } from '../record.js';

export const PORT_PLACEHOLDER = '{port}';

export function hasPortPlaceholder(url: string): boolean {
  return url.includes(PORT_PLACEHOLDER);
}

/** The URL with every `{port}` replaced. */
export function fillPort(url: string, port: number): string {
  return url.split(PORT_PLACEHOLDER).join(String(port));
}

/** The host a URL names, read with a stand-in port when it has `{port}`; null when it does not parse. */
export function urlHost(url: string): string | null {
  try {
    return new URL(fillPort(url, 1)).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return null;
  }
}

/** A port nothing listens on right now, on `host` (the agent server binds it a moment later). */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port: 0, host }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error(`no free port on ${host}`))));
    });
  });
}

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|::1|0\.0\.0\.0|::)$/;

/** host:port of a literal agent.url (loopback names as one), or null with `{port}` or no URL. */
function literalEndpoint(url: string | undefined): { key: string; port: string } | null {
  if (url === undefined || hasPortPlaceholder(url)) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const port = parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  return { key: `${LOOPBACK.test(host) ? 'loopback' : host}:${port}`, port };
}

/**
 * The error when base and head would talk to one server: both agent.url name the same literal
 * host and port, so the head's episodes could reach the base's server (or the other way round).
 */
export function sharedPortProblem(agents: Partial<Record<Side, AgentConfig>>): string | null {
  const base = literalEndpoint(agents.base?.url);
  const head = literalEndpoint(agents.head?.url);
  if (!base || !head || base.key !== head.key) return null;
  return `base and head both use port ${head.port} in agent.url: use {port} (e.g. http://127.0.0.1:{port}/), and Stategate gives each side's agent.serve its own free port in PORT`;
}
