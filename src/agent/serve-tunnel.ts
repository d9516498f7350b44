// The harness's half of agent.serve's tunnel (runner-forward.ts), for a server that runs where the
// harness's network is not (a bubblewrap sandbox's or a container's own loopback). The harness POSTs
// to a loopback port of its own (ServeFront); each connection is carried in by the runner, which on
// "open ID" connects to the server inside and back to a socket served here. Each episode's gateway
// (and database) gets a forward inside before its POST, so the server sees the same 127.0.0.1 URLs
// an agent.command episode does. Every socket is the harness's: it never connects to the agent.
import { randomBytes } from 'node:crypto';
import { chmodSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { insideUrl } from './container.js';
import type { ServeHandle } from './server.js';
import { joinSockets } from './socket-forward.js';
import type { EpisodeVars } from './types.js';
import { within } from './within.js';

// A connection the runner does not pick up within this is dropped (the server is gone or stuck).
const OPEN_TIMEOUT_MS = 10_000;
/** The socket names in a tunnel's directory. */
export const TUNNEL_CONTROL = 'tunnel.sock';
export const TUNNEL_DATA = 'data.sock';

/** The control and data sockets of one server incarnation, served in `dir` from construction on. */
export class ServeTunnel {
  private control?: Socket;
  private isReady = false;
  private onReady!: () => void;
  /** Resolves once the server accepts connections inside. */
  readonly readied = new Promise<void>((resolve) => {
    this.onReady = resolve;
  });
  private readonly waiting = new Map<string, (verb: string) => void>();
  private readonly pending = new Map<string, Socket>();
  private readonly forwarded = new Map<number, Promise<void>>();
  private readonly servers: Server[] = [];
  private closed = false;

  constructor(dir: string) {
    this.servers.push(
      this.listen(join(dir, TUNNEL_CONTROL), (s) => this.onControl(s)),
      this.listen(join(dir, TUNNEL_DATA), (s) => this.onData(s)),
    );
  }

  get ready(): boolean {
    return this.isReady;
  }

  // A Unix socket is bound by listen() itself: the runner can connect as soon as it starts.
  private listen(path: string, onConnection: (s: Socket) => void): Server {
    const server = createServer(onConnection);
    server.listen(path);
    chmodSync(path, 0o666);
    return server;
  }

  private onControl(s: Socket): void {
    s.on('error', () => undefined);
    // The runner connects before the agent starts; any later connection is not the runner's.
    if (this.control) return void s.destroy();
    this.control = s;
    let buf = '';
    s.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const [verb, arg] = buf.slice(0, i).split(' ');
        buf = buf.slice(i + 1);
        if (verb === 'ready') {
          this.isReady = true;
          this.onReady();
        } else if (verb === 'fail') this.pending.get(arg)?.destroy();
        else this.waiting.get(arg)?.(verb);
      }
    });
  }

  private onData(s: Socket): void {
    s.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const i = buf.indexOf(10);
      if (i < 0) {
        if (buf.length > 64) s.destroy();
        return;
      }
      s.off('data', onData);
      const id = buf.subarray(0, i).toString('utf8');
      const conn = this.pending.get(id);
      this.pending.delete(id);
      if (!conn) return void s.destroy();
      if (i + 1 < buf.length) conn.write(buf.subarray(i + 1));
      joinSockets(conn, s);
    };
    s.on('data', onData);
  }

  /** Carries one harness connection to the server inside; drops it when the server is not up. */
  open(conn: Socket): void {
    conn.on('error', () => undefined);
    if (!this.control || !this.isReady || this.closed) return void conn.destroy();
    // Unguessable: the agent may connect to the data socket too, but cannot claim a connection.
    const id = randomBytes(16).toString('hex');
    this.pending.set(id, conn);
    conn.pause();
    this.control.write(`open ${id}\n`);
    setTimeout(() => {
      if (this.pending.delete(id)) conn.destroy();
    }, OPEN_TIMEOUT_MS).unref();
  }

  /** Makes 127.0.0.1:port inside reach `socket` (a path inside); once per port. */
  forward(port: number, socket: string, gone: Promise<unknown>): Promise<void> {
    let done = this.forwarded.get(port);
    if (!done) {
      done = (async () => {
        // A restarted server may still be starting: wait for it (or its end).
        await Promise.race([this.readied, gone]);
        if (!this.control || this.closed) throw new Error('the agent server is not running');
        const answer = new Promise<string>((resolve) => this.waiting.set(String(port), resolve));
        this.control.write(`forward ${port} ${socket}\n`);
        const verb = await within(answer, OPEN_TIMEOUT_MS);
        this.waiting.delete(String(port));
        if (verb !== 'ok') throw new Error(`the agent server's runner could not listen on 127.0.0.1:${port}`);
      })();
      this.forwarded.set(port, done);
      done.catch(() => this.forwarded.delete(port));
    }
    return done;
  }

  /** Hangs up on the runner (which then stops the server) and stops serving. */
  async close(): Promise<void> {
    this.closed = true;
    this.control?.destroy();
    for (const conn of this.pending.values()) conn.destroy();
    await Promise.all(
      this.servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
    );
  }
}

/** One incarnation of a tunnelled server: what startAgentServer needs, plus the tunnel's two doors. */
export interface TunnelledServe extends ServeHandle {
  open(conn: Socket): void;
  /** Makes 127.0.0.1:port inside reach host:port here. */
  forward(host: string, port: number): Promise<void>;
}

/** agent.url's port inside (`{port}`: INSIDE_DEFAULT_PORT), and the path the harness POSTs to. */
export const INSIDE_DEFAULT_PORT = 8080;
export function insideTarget(url: string): { port: number; path: string } {
  const u = new URL(url.replace('{port}', String(INSIDE_DEFAULT_PORT)));
  return { port: Number(u.port || 80), path: `${u.pathname}${u.search}` };
}

/** The side's tunnelled agent server: the loopback port the harness POSTs to, and the current incarnation. */
export class ServeFront {
  private current: TunnelledServe | null = null;

  private constructor(
    private readonly front: Server,
    private readonly conns: Set<Socket>,
    readonly url: string,
    private readonly incarnation: () => TunnelledServe,
  ) {}

  /**
   * Listens on 127.0.0.1:port (0: a free one); `incarnation` starts the server (the first time and
   * the restart).
   */
  static async open(url: string, incarnation: () => TunnelledServe, port = 0): Promise<ServeFront> {
    const target = insideTarget(url);
    let self: ServeFront | undefined;
    const conns = new Set<Socket>();
    const front = createServer((conn) => {
      conns.add(conn);
      conn.once('close', () => conns.delete(conn));
      if (self?.current) self.current.open(conn);
      else conn.destroy();
    });
    await new Promise<void>((resolve, reject) => {
      front.once('error', reject);
      front.listen(port, '127.0.0.1', () => resolve());
    });
    const bound = (front.address() as { port: number }).port;
    self = new ServeFront(front, conns, `http://127.0.0.1:${bound}${target.path}`, incarnation);
    return self;
  }

  /** Starts a new incarnation (startAgentServer calls this for the first start and the one restart). */
  start(): TunnelledServe {
    this.current = this.incarnation();
    return this.current;
  }

  /** The episode's variables as the server inside must use them; forwards their ports first. */
  async vars(vars: EpisodeVars): Promise<EpisodeVars> {
    const current = this.current;
    if (!current) throw new Error('the agent server is not running');
    const out = { ...vars };
    for (const key of ['toolsUrl', 'mcpUrl', 'databaseUrl'] as const) {
      const value = out[key];
      if (value === undefined) continue;
      const inside = insideUrl(value);
      if (!inside) continue;
      await current.forward(inside.host, inside.port);
      out[key] = inside.url;
    }
    return out;
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.front.close(() => resolve()));
    // close() would otherwise wait for kept-alive connections.
    for (const conn of this.conns) conn.destroy();
    await closed;
  }
}
