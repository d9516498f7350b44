// agent.serve in its side's bubblewrap sandbox (sandbox.ts): the same uid, allowlisted root, private
// HOME and /tmp as the side's agent.setup, and a network namespace of its own. The harness reaches
// the server's port through the tunnel of serve-tunnel.ts (the runner connects out to sockets of
// this server's call directory), and the server reaches each episode's gateway and database through
// the side's forwarded sockets. Bubblewrap's PID namespace ends everything the server started with it.
import type { Socket } from 'node:net';
import type { SideSandbox } from './sandbox.js';
import { SANDBOX_CALL_MOUNT } from './sandbox-runner.js';
import { AgentStartError, describeExit, logTail, type ServeExit, ServeProcess } from './serve-process.js';
import { ServeTunnel, TUNNEL_CONTROL, TUNNEL_DATA, type TunnelledServe } from './serve-tunnel.js';
import { within } from './within.js';

const HEALTH_POLL_MS = 100;

export interface SandboxServeOptions {
  serve: string;
  cwd: string;
  env: Record<string, string>;
  logFile: string;
  graceMs: number;
  /** The server's port inside its network namespace (PORT in its environment). */
  port: number;
}

/** One incarnation of the agent server in its side's sandbox (a restart is a new one). */
export class SandboxServe implements TunnelledServe {
  readonly exited: Promise<ServeExit>;
  private readonly tunnel: ServeTunnel;
  private readonly proc: ServeProcess;

  constructor(
    private readonly sandbox: SideSandbox,
    private readonly opts: SandboxServeOptions,
  ) {
    const call = sandbox.newCall();
    // Served before the sandbox starts: the runner connects first, then starts the server.
    this.tunnel = new ServeTunnel(call);
    const tunnel = {
      port: opts.port,
      control: `${SANDBOX_CALL_MOUNT}/${TUNNEL_CONTROL}`,
      data: `${SANDBOX_CALL_MOUNT}/${TUNNEL_DATA}`,
    };
    this.proc = ServeProcess.start(
      opts.serve,
      opts.cwd,
      { ...opts.env, PORT: String(opts.port) },
      opts.logFile,
      opts.graceMs,
      { wrap: (command, env) => sandbox.wrap(command, env, { call, tunnel }) },
    );
    this.exited = this.proc.exited.then(async (exit) => {
      await this.tunnel.close();
      return exit;
    });
  }

  get exit(): ServeExit | null {
    return this.proc.exit;
  }

  open(conn: Socket): void {
    if (this.proc.exit) return void conn.destroy();
    this.tunnel.open(conn);
  }

  async forward(host: string, port: number): Promise<void> {
    if (this.proc.exit) throw new Error('the agent server is not running');
    await this.tunnel.forward(port, this.sandbox.forward(host, port), this.proc.exited);
  }

  /** Waits until the server accepts connections inside its sandbox; throws AgentStartError with the log tail. */
  async waitHealthy(url: URL, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.proc.exit)
        throw this.startError(`exited (${describeExit(this.proc.exit)}) before it accepted connections`, url);
      if (this.tunnel.ready) return;
      if (Date.now() >= deadline) {
        await this.stop();
        throw this.startError(`did not accept connections within ${timeoutMs} ms`, url);
      }
      await within(Promise.race([this.proc.exited, this.tunnel.readied]), HEALTH_POLL_MS);
    }
  }

  private startError(what: string, url: URL): AgentStartError {
    return new AgentStartError(
      `agent server (in its sandbox, port ${this.opts.port} inside) ${what} at ${url.origin}; last lines of ${this.opts.logFile}:\n${logTail(this.opts.logFile)}`,
    );
  }

  /** SIGTERM to the server's group (through the runner), SIGKILL after the grace period. */
  async stop(): Promise<void> {
    await this.proc.stop();
    await this.tunnel.close();
  }
}
