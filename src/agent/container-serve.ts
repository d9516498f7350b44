// agent.serve under `agent.isolation: container`: the server runs in a container with no network.
// The harness POSTs to a loopback port of its own; each connection is carried into the container by
// the runner, which on request ("open ID") connects to the server inside and back to a socket served
// here. Each episode's gateway (and database) gets a forward inside before its POST, so the server
// sees the same 127.0.0.1 URLs an agent.command episode does.

import { randomBytes } from 'node:crypto';
import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { type AgentContainers, containerEnv, EPISODE_MOUNT, insideUrl, WORKSPACE } from './container.js';
import { type AgentContainer, startAgentContainer } from './container-docker.js';
import { RUNNER_MOUNT, type RunnerSpec } from './container-runner.js';
import { AgentStartError, appendLog, describeExit, logTail, type ServeExit } from './serve-process.js';
import { type Forwarder, joinSockets, unixListener } from './socket-forward.js';
import type { EpisodeVars } from './types.js';
import { within } from './within.js';

const HEALTH_POLL_MS = 100;
// A connection the runner does not pick up within this is dropped (the server is gone or stuck).
const OPEN_TIMEOUT_MS = 10_000;
/** The port inside the container when agent.url asks for `{port}`. */
export const INSIDE_DEFAULT_PORT = 8080;

/** agent.url's port inside the container, and the path the harness POSTs to. */
export function insideTarget(url: string): { port: number; path: string } {
  const u = new URL(url.replace('{port}', String(INSIDE_DEFAULT_PORT)));
  return { port: Number(u.port || 80), path: `${u.pathname}${u.search}` };
}

/** One incarnation of the agent server in a container (a restart is a new one). */
export class ContainerServe {
  exit: ServeExit | null = null;
  readonly exited: Promise<ServeExit>;
  private container?: AgentContainer;
  private control?: Socket;
  private ready = false;
  private onReady!: () => void;
  /** Resolves once the server accepts connections inside. */
  private readonly readied = new Promise<void>((resolve) => {
    this.onReady = resolve;
  });
  private readonly forwarded = new Map<number, Promise<void>>();
  private readonly waiting = new Map<string, (line: string) => void>();
  private readonly pending = new Map<string, Socket>();
  private readonly listeners: Forwarder[] = [];
  private readonly dir: string;
  private readonly started: Promise<void>;

  constructor(
    private readonly containers: AgentContainers,
    private readonly opts: {
      serve: string;
      env: Record<string, string>;
      logFile: string;
      graceMs: number;
      port: number;
    },
  ) {
    this.dir = containers.containerDir();
    appendLog(opts.logFile, `starting agent server in a container: ${opts.serve}`);
    let settle!: (exit: ServeExit) => void;
    this.exited = new Promise((resolve) => {
      settle = (exit) => {
        if (this.exit) return;
        this.exit = exit;
        appendLog(opts.logFile, `agent server exited (${describeExit(exit)})`);
        resolve(exit);
        void this.cleanup();
      };
    });
    this.started = this.start().then(
      () => {
        void this.container!.exited.then((code) => settle({ code, signal: null }));
      },
      (err: Error) => settle({ code: null, signal: null, error: err.message }),
    );
  }

  private async start(): Promise<void> {
    const { logFile } = this.opts;
    this.listeners.push(
      await unixListener(join(this.dir, 'out.sock'), (s) =>
        s.on('data', (d: Buffer) => appendFileSync(logFile, d)),
      ),
      await unixListener(join(this.dir, 'control.sock'), (s) => this.onControl(s)),
      await unixListener(join(this.dir, 'data.sock'), (s) => this.onData(s)),
    );
    const inside = (name: string) => `${EPISODE_MOUNT}/${name}`;
    const spec: RunnerSpec = {
      command: this.opts.serve,
      stdout: inside('out.sock'),
      stderr: inside('out.sock'),
      forwards: [],
      tunnel: { port: this.opts.port, control: inside('control.sock'), data: inside('data.sock') },
    };
    writeFileSync(join(this.dir, 'spec.json'), JSON.stringify(spec), { mode: 0o644 });
    this.container = await startAgentContainer({
      image: await this.containers.imageName(),
      binds: this.containers.binds(false, [{ source: this.dir, target: EPISODE_MOUNT }]),
      covers: this.containers.covers(),
      env: { ...containerEnv(this.opts.env), PORT: String(this.opts.port) },
      command: ['node', `${RUNNER_MOUNT}/runner.js`, inside('spec.json')],
      workDir: WORKSPACE,
      user: this.containers.user,
    });
  }

  private onControl(s: Socket): void {
    // The runner connects before the agent starts; any later connection is not the runner's.
    if (this.control) {
      s.destroy();
      return;
    }
    this.control = s;
    let buf = '';
    s.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const [verb, arg] = buf.slice(0, i).split(' ');
        buf = buf.slice(i + 1);
        if (verb === 'ready') {
          this.ready = true;
          this.onReady();
        } else if (verb === 'fail') this.pending.get(arg)?.destroy();
        else this.waiting.get(arg)?.(verb);
      }
    });
    s.on('error', () => undefined);
  }

  private onData(s: Socket): void {
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
    s.on('error', () => undefined);
  }

  /** Carries one harness connection to the server inside. */
  open(conn: Socket): void {
    conn.on('error', () => undefined);
    if (!this.control || !this.ready || this.exit) {
      conn.destroy();
      return;
    }
    const id = randomBytes(16).toString('hex');
    this.pending.set(id, conn);
    conn.pause();
    this.control.write(`open ${id}\n`);
    setTimeout(() => {
      if (this.pending.delete(id)) conn.destroy();
    }, OPEN_TIMEOUT_MS).unref();
  }

  /** Makes 127.0.0.1:port inside reach host:port here; once per port and incarnation. */
  forward(host: string, port: number): Promise<void> {
    let done = this.forwarded.get(port);
    if (!done) {
      done = (async () => {
        const socket = await this.containers.forward(host, port);
        // A restarted server may still be starting: wait for it (or its end).
        await Promise.race([this.readied, this.exited]);
        if (!this.control || this.exit) throw new Error('the agent server container is not running');
        const answer = new Promise<string>((resolve) => this.waiting.set(String(port), resolve));
        this.control.write(`forward ${port} ${socket}\n`);
        const verb = await within(answer, OPEN_TIMEOUT_MS);
        this.waiting.delete(String(port));
        if (verb !== 'ok')
          throw new Error(`the agent server container could not listen on 127.0.0.1:${port}`);
      })();
      this.forwarded.set(port, done);
      done.catch(() => this.forwarded.delete(port));
    }
    return done;
  }

  /** Polls until the server accepts connections inside; throws AgentStartError with the log tail. */
  async waitHealthy(url: URL, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    await within(this.started, timeoutMs);
    for (;;) {
      if (this.exit)
        throw this.startError(`exited (${describeExit(this.exit)}) before it accepted connections`, url);
      if (this.ready) return;
      if (Date.now() >= deadline) {
        await this.stop();
        throw this.startError(`did not accept connections within ${timeoutMs} ms`, url);
      }
      await within(this.exited, HEALTH_POLL_MS);
    }
  }

  private startError(what: string, url: URL): AgentStartError {
    return new AgentStartError(
      `agent server (in its container) ${what} at ${url.origin}; last lines of ${this.opts.logFile}:\n${logTail(this.opts.logFile)}`,
    );
  }

  /** Stops the container (SIGTERM to the server's group, SIGKILL after the grace period) and removes it. */
  async stop(): Promise<void> {
    await this.started;
    await this.container?.stop(this.opts.graceMs);
    await within(this.exited, this.opts.graceMs + 5000);
    await this.cleanup();
  }

  private async cleanup(): Promise<void> {
    await this.container?.remove();
    this.control?.destroy();
    for (const conn of this.pending.values()) conn.destroy();
    await Promise.all(this.listeners.splice(0).map((l) => l.close()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The side's agent server in containers: the loopback port the harness POSTs to, and the current incarnation. */
export class ContainerAgentServer {
  private current: ContainerServe | null = null;

  private constructor(
    private readonly containers: AgentContainers,
    private readonly front: Server,
    private readonly conns: Set<Socket>,
    readonly url: string,
    private readonly opts: {
      serve: string;
      env: Record<string, string>;
      logFile: string;
      graceMs: number;
      port: number;
    },
  ) {}

  static async open(
    containers: AgentContainers,
    opts: { serve: string; url: string; env: Record<string, string>; logFile: string; graceMs: number },
  ): Promise<ContainerAgentServer> {
    const target = insideTarget(opts.url);
    let self: ContainerAgentServer | undefined;
    const conns = new Set<Socket>();
    const front = createServer((conn) => {
      conns.add(conn);
      conn.once('close', () => conns.delete(conn));
      if (self?.current) self.current.open(conn);
      else conn.destroy();
    });
    await new Promise<void>((resolve, reject) => {
      front.once('error', reject);
      front.listen(0, '127.0.0.1', () => resolve());
    });
    const port = (front.address() as { port: number }).port;
    self = new ContainerAgentServer(containers, front, conns, `http://127.0.0.1:${port}${target.path}`, {
      ...opts,
      port: target.port,
    });
    return self;
  }

  /** Starts a new incarnation (startAgentServer calls this for the first start and the one restart). */
  start(): ContainerServe {
    this.current = new ContainerServe(this.containers, this.opts);
    return this.current;
  }

  /** The episode's variables as the server inside must use them; forwards their ports first. */
  async vars(vars: EpisodeVars): Promise<EpisodeVars> {
    const current = this.current;
    if (!current) throw new Error('the agent server container is not running');
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
