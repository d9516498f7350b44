// Ports of agent servers: `{port}` in agent.url is a free port Stategate picks for each side (its
// serve gets it as PORT), so two checkouts of one stategate.yml never share a server.
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import type { AgentConfig } from '../config/schema.js';
import type { Side } from '../model/episode.js';

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

/** The eight 16-bit groups of an IPv6 address (with an embedded IPv4 tail), or null. */
function ipv6Groups(host: string): number[] | null {
  if (net.isIPv6(host) === false) return null;
  let text = host.replace(/%.*$/, '');
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined) =>
    part ? part.split(':').map((g) => Number.parseInt(g, 16)) : [];
  const left = parse(head);
  const right = parse(tail);
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 ? groups : null;
}

/**
 * One spelling per address: lowercase, no brackets or trailing dot, an IPv4-mapped (or -compatible)
 * IPv6 address as its IPv4 address, other IPv6 addresses fully expanded.
 */
function normalHost(hostname: string): string {
  const host = hostname
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase()
    .replace(/\.+$/, '');
  const groups = ipv6Groups(host);
  if (!groups) return host;
  if (
    groups.slice(0, 5).every((g) => g === 0) &&
    (groups[5] === 0xffff || groups[5] === 0) &&
    groups[6] !== 0
  )
    return [groups[6]! >> 8, groups[6]! & 255, groups[7]! >> 8, groups[7]! & 255].join('.');
  return groups.map((g) => g.toString(16)).join(':');
}

/** Whether a (normalised) host is this machine: loopback, the unspecified address, or its interfaces. */
function isLocal(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (/^(127\.\d+\.\d+\.\d+|0\.0\.0\.0)$/.test(host)) return true;
  if (host === '0:0:0:0:0:0:0:1' || host === '0:0:0:0:0:0:0:0' || host === '0.0.0.0') return true;
  return Object.values(networkInterfaces())
    .flat()
    .some((i) => i !== undefined && normalHost(i.address) === host);
}

/** The endpoint of a literal agent.url, or null with `{port}` or no URL. */
function literalEndpoint(url: string | undefined): { host: string; port: string; local: boolean } | null {
  if (url === undefined || hasPortPlaceholder(url)) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const port = parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
  const host = normalHost(parsed.hostname);
  return { host, port, local: isLocal(host) };
}

/**
 * Whether two literal endpoints may reach one listener. Every spelling of this machine is one
 * endpoint; a DNS name may resolve to this machine (or be made to, later), so beside a local one on
 * the same port it counts as the same too.
 */
function sameEndpoint(
  a: { host: string; port: string; local: boolean },
  b: { host: string; port: string; local: boolean },
): boolean {
  if (a.port !== b.port) return false;
  if (a.host === b.host || (a.local && b.local)) return true;
  const name = (e: typeof a) => !e.local && net.isIP(e.host) === 0;
  return (a.local && name(b)) || (b.local && name(a));
}

/**
 * The error when base and head would talk to one server: both agent.url name the same literal
 * host and port, so the head's episodes could reach the base's server (or the other way round).
 */
export function sharedPortProblem(agents: Partial<Record<Side, AgentConfig>>): string | null {
  const base = literalEndpoint(agents.base?.url);
  const head = literalEndpoint(agents.head?.url);
  if (!base || !head || !sameEndpoint(base, head)) return null;
  return `base and head both use port ${head.port} in agent.url: use {port} (e.g. http://127.0.0.1:{port}/), and Stategate gives each side's agent.serve its own free port in PORT (without serve, use another port; ${base.host} and ${head.host} may reach one server)`;
}
