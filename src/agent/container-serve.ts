// agent.serve under `agent.isolation: container`: the server runs in a container with no network,
// reached through the tunnel of serve-tunnel.ts (the harness's ServeFront, the runner's connections
// back to sockets served here).

import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { type AgentContainers, containerEnv, EPISODE_MOUNT, WORKSPACE } from './container.js';
import { type AgentContainer, startAgentContainer } from './container-docker.js';
import { RUNNER_MOUNT, type RunnerSpec } from './container-runner.js';
import { AgentStartError, appendLog, describeExit, logTail, type ServeExit } from './serve-process.js';
import { ServeTunnel, TUNNEL_CONTROL, TUNNEL_DATA, type TunnelledServe } from './serve-tunnel.js';
import { type Forwarder, unixListener } from './socket-forward.js';
import { within } from './within.js';

const HEALTH_POLL_MS = 100;

/** One incarnation of the agent server in a container (a restart is a new one). */
export class ContainerServe implements TunnelledServe {
  exit: ServeExit | null = null;
  readonly exited: Promise<ServeExit>;
  private container?: AgentContainer;
  private tunnel?: ServeTunnel;
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
    );
    this.tunnel = new ServeTunnel(this.dir);
    const inside = (name: string) => `${EPISODE_MOUNT}/${name}`;
    const spec: RunnerSpec = {
      command: this.opts.serve,
      stdout: inside('out.sock'),
      stderr: inside('out.sock'),
      forwards: [],
      tunnel: { port: this.opts.port, control: inside(TUNNEL_CONTROL), data: inside(TUNNEL_DATA) },
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

  /** Carries one harness connection to the server inside. */
  open(conn: Socket): void {
    if (!this.tunnel || this.exit) return void conn.destroy();
    this.tunnel.open(conn);
  }

  /** Makes 127.0.0.1:port inside reach host:port here; once per port and incarnation. */
  async forward(host: string, port: number): Promise<void> {
    const socket = await this.containers.forward(host, port);
    await this.started;
    if (!this.tunnel || this.exit) throw new Error('the agent server container is not running');
    await this.tunnel.forward(port, socket, this.exited);
  }

  /** Polls until the server accepts connections inside; throws AgentStartError with the log tail. */
  async waitHealthy(url: URL, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    await within(this.started, timeoutMs);
    for (;;) {
      if (this.exit)
        throw this.startError(`exited (${describeExit(this.exit)}) before it accepted connections`, url);
      if (this.tunnel?.ready) return;
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
    await this.tunnel?.close();
    await Promise.all(this.listeners.splice(0).map((l) => l.close()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
