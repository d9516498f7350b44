// A loopback HTTP proxy, as a corporate runner's HTTPS_PROXY / HTTP_PROXY would be: it tunnels
// CONNECT requests and forwards absolute-form requests, and records each one. It resolves host names
// from its own table only, so a name in that table is reachable through the proxy and nowhere else,
// and it only ever connects to loopback addresses.
import { createServer, request as httpRequest } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';

/** One request the proxy handled: CONNECT host:port, or the method and URL of a forwarded request. */
export interface ProxiedRequest {
  method: string;
  /** host:port the client asked for. */
  target: string;
  /** Whether the proxy knew the host (unknown hosts get 502). */
  known: boolean;
}

export class LoopbackProxy {
  readonly seen: ProxiedRequest[] = [];
  url = '';
  private readonly sockets = new Set<Socket>();
  private readonly server = createServer((req, res) => {
    // A forwarding proxy gets the absolute URL in the request line.
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute-form request expected');
      return;
    }
    const address = this.resolve(target.hostname);
    this.seen.push({ method: req.method ?? '', target: target.host, known: address !== null });
    if (!address) {
      res.writeHead(502).end(`proxy cannot resolve ${target.hostname}`);
      return;
    }
    const upstream = httpRequest(
      {
        host: address,
        port: target.port || 80,
        method: req.method,
        path: target.pathname + target.search,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });

  /** @param hosts host name -> loopback address, the only names the proxy resolves. */
  constructor(private readonly hosts: Record<string, string>) {
    for (const [name, address] of Object.entries(hosts)) {
      if (!/^127\./.test(address))
        throw new Error(`proxy host ${name} must map to a loopback address, not ${address}`);
    }
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.server.on('connect', (req, client: Socket, head: Buffer) => {
      const target = req.url ?? '';
      const at = target.lastIndexOf(':');
      const host = at > 0 ? target.slice(0, at) : target;
      const address = this.resolve(host);
      this.seen.push({ method: 'CONNECT', target, known: address !== null });
      if (!address || at <= 0) {
        client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
        return;
      }
      const upstream = connect(Number(target.slice(at + 1)), address, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      this.sockets.add(upstream);
      upstream.on('close', () => this.sockets.delete(upstream));
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
  }

  private resolve(host: string): string | null {
    return Object.hasOwn(this.hosts, host) ? this.hosts[host] : null;
  }

  /** Listens on 127.0.0.1 on a free port. */
  async start(): Promise<this> {
    await new Promise<void>((ok) => this.server.listen(0, '127.0.0.1', ok));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((ok) => this.server.close(() => ok()));
  }
}

/** Starts a proxy that resolves only the given names. */
export async function startProxy(hosts: Record<string, string>): Promise<LoopbackProxy> {
  return new LoopbackProxy(hosts).start();
}
