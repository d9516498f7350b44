// `agent.isolation: container` for one side: each agent.command episode (and agent.setup) runs in a
// fresh container with the checkout read-only at /workspace, /tmp as HOME, only the agent
// environment, and no network: the gateway (and, with expose, the database) is reached through
// Unix sockets served here and bridged to 127.0.0.1 inside by the runner. Same stdin, stdout, exit
// code and timeout semantics as a process (run-process.ts); the container is removed afterwards.
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { isAbsolute, join, posix, relative, sep } from 'node:path';
import type { OutputCapture } from './capture.js';
import {
  AGENT_USER,
  type AgentContainer,
  removeImage,
  resolveAgentImage,
  startAgentContainer,
} from './container-docker.js';
import { RUNNER_MOUNT, RUNNER_SOURCE, type RunnerSpec } from './container-runner.js';
import { beginRun, type GroupRunOptions, type GroupRunResult } from './run-process.js';
import { type Forwarder, unixListener, unixToTcp } from './socket-forward.js';
import { within } from './within.js';

/** The checkout inside the container. */
export const WORKSPACE = '/workspace';
/** A per-container host directory (spec, stdin, output sockets), read-only inside. */
export const EPISODE_MOUNT = '/stategate/episode';
// Variables whose URLs point at this machine's loopback; inside they point at the runner's bridge.
const URL_VARS = ['STATEGATE_TOOLS_URL', 'STATEGATE_MCP_URL', 'DATABASE_URL'];
const PIPE_DRAIN_MS = 500;

// Socket directories not yet removed; removed synchronously if stategate exits first.
const liveDirs = new Set<string>();
let exitHookInstalled = false;
function removeOnExit(dir: string): void {
  liveDirs.add(dir);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const d of liveDirs) rmSync(d, { recursive: true, force: true });
  });
}

export interface AgentContainersOptions {
  image?: string;
  dockerfile?: string;
  checkoutDir: string;
  /**
   * Harness folders the agent must not reach (the run's out directory, the cache): those inside the
   * checkout are covered in every container, agent.setup's writable one included.
   */
  hide?: string[];
}

/** The agent's environment inside: the host's PATH and HOME mean nothing there. */
export function containerEnv(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { ...env, HOME: '/tmp', TMPDIR: '/tmp' };
  delete out.PATH;
  return out;
}

/**
 * The user the side's containers run as: the checkout's owner, so the files read (and, for
 * agent.setup, write) as on the host; never root, AGENT_USER instead, who then needs the checkout
 * readable by others. Throws when it is not.
 */
export function containerUser(dir: string): string {
  const { uid, gid, mode } = statSync(dir);
  if (uid !== 0) return `${uid}:${gid}`;
  if ((mode & 0o005) !== 0o005)
    throw new Error(
      `agent.isolation: container: the checkout ${dir} belongs to root and others may not read it (mode ${(mode & 0o777).toString(8)}); the agent runs as ${AGENT_USER} inside: chmod o+rx it, or run from a checkout a non-root user owns`,
    );
  return AGENT_USER;
}

/** A URL of this machine's loopback as seen from inside: same port, host 127.0.0.1. */
export function insideUrl(value: string): { url: string; host: string; port: number } | null {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return null;
  }
  const port = Number(u.port || (u.protocol === 'http:' ? 80 : u.protocol.startsWith('postgres') ? 5432 : 0));
  if (!port) return null;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return { url: u.toString(), host, port };
}

/** The containers of one side: its image, its socket directory, its forwarders. */
export class AgentContainers {
  /** Host directory mounted read-only at RUNNER_MOUNT: the runner and the forward sockets. */
  readonly dir: string;
  private readonly forwards = new Map<number, Promise<Forwarder>>();
  private image: Promise<{ image: string; built: boolean }> | undefined;
  /** uid:gid inside (containerUser). */
  readonly user: string;
  /** The checkout's owner, root included: agent.setup runs as it, to write the checkout. */
  private readonly owner: string;

  constructor(private readonly opts: AgentContainersOptions) {
    this.user = containerUser(opts.checkoutDir);
    const { uid, gid } = statSync(opts.checkoutDir);
    this.owner = `${uid}:${gid}`;
    this.dir = mkdtempSync(join(tmpdir(), 'stategate-agent-'));
    removeOnExit(this.dir);
    chmodSync(this.dir, 0o755);
    writeFileSync(join(this.dir, 'runner.js'), RUNNER_SOURCE, { mode: 0o644 });
  }

  /** Resolves (or builds, once) the side's image. */
  imageName(): Promise<string> {
    this.image ??= resolveAgentImage(this.opts);
    return this.image.then((i) => i.image);
  }

  /** The socket (as seen inside) that reaches host:port; served from now on. */
  async forward(host: string, port: number): Promise<string> {
    let f = this.forwards.get(port);
    if (!f) {
      f = unixToTcp(join(this.dir, `fw-${port}.sock`), host, port);
      this.forwards.set(port, f);
    }
    await f;
    return `${RUNNER_MOUNT}/fw-${port}.sock`;
  }

  /** Rewrites the URL variables to their inside addresses and returns the forwards they need. */
  async bridgeEnv(
    env: Record<string, string>,
  ): Promise<{ env: Record<string, string>; forwards: RunnerSpec['forwards'] }> {
    const out = containerEnv(env);
    const forwards: RunnerSpec['forwards'] = [];
    for (const name of URL_VARS) {
      if (out[name] === undefined) continue;
      const inside = insideUrl(out[name]);
      if (!inside) continue;
      out[name] = inside.url;
      if (!forwards.some((f) => f.port === inside.port))
        forwards.push({ port: inside.port, socket: await this.forward(inside.host, inside.port) });
    }
    return { env: out, forwards };
  }

  /** Where the hidden folders inside the checkout appear in the container (those that exist now). */
  covers(): string[] {
    const out: string[] = [];
    for (const path of this.opts.hide ?? []) {
      const rel = relative(this.opts.checkoutDir, path);
      if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) continue;
      try {
        if (statSync(path).isDirectory()) out.push(posix.join(WORKSPACE, ...rel.split(sep)));
      } catch {
        // Absent: nothing of the harness's there to hide.
      }
    }
    return out;
  }

  /** Binds every container of this side gets, plus `extra`. */
  binds(writableCheckout: boolean, extra: { source: string; target: string; mode?: 'ro' | 'rw' }[] = []) {
    return [
      { source: this.opts.checkoutDir, target: WORKSPACE, mode: writableCheckout ? 'rw' : 'ro' } as const,
      { source: this.dir, target: RUNNER_MOUNT, mode: 'ro' } as const,
      ...extra.map((b) => ({ ...b, mode: b.mode ?? ('ro' as const) })),
    ];
  }

  /**
   * runInGroup's twin: one command in a fresh container, `cwd` being the checkout. The timeout
   * counts from the moment the container runs. Never throws.
   */
  async run(opts: GroupRunOptions & { writableCheckout?: boolean }): Promise<GroupRunResult> {
    const { result, ready } = await beginRun(opts);
    if (!ready) return result;
    const { stdout, stderr } = result;
    const ep = this.containerDir();
    const listeners: Forwarder[] = [];
    let container: AgentContainer | undefined;
    const streams: Promise<void>[] = [];
    let connected = false;
    const capture = (into: OutputCapture) => (s: Socket) => {
      connected = true;
      s.on('data', (chunk: Buffer) => into.push(chunk));
      streams.push(new Promise((resolve) => s.once('close', () => resolve())));
    };
    try {
      listeners.push(await unixListener(join(ep, 'out.sock'), capture(stdout)));
      if (!opts.mergeOutput) listeners.push(await unixListener(join(ep, 'err.sock'), capture(stderr)));
      if (opts.stdin !== undefined) writeFileSync(join(ep, 'input.json'), opts.stdin, { mode: 0o644 });
      const { env, forwards } = await this.bridgeEnv(opts.env);
      const inside = (name: string) => `${EPISODE_MOUNT}/${name}`;
      const spec: RunnerSpec = {
        command: opts.command,
        ...(opts.stdin === undefined ? {} : { stdin: inside('input.json') }),
        stdout: inside('out.sock'),
        stderr: inside(opts.mergeOutput ? 'out.sock' : 'err.sock'),
        forwards,
      };
      writeFileSync(join(ep, 'spec.json'), JSON.stringify(spec), { mode: 0o644 });
      container = await startAgentContainer({
        image: await this.imageName(),
        binds: this.binds(opts.writableCheckout ?? false, [{ source: ep, target: EPISODE_MOUNT }]),
        covers: this.covers(),
        env,
        command: ['node', `${RUNNER_MOUNT}/runner.js`, inside('spec.json')],
        workDir: WORKSPACE,
        user: opts.writableCheckout ? this.owner : this.user,
      });
    } catch (err) {
      result.spawnError = (err as Error).message;
      await this.cleanup(container, listeners, ep);
      return result;
    }
    const started = performance.now();
    let terminated = false;
    const terminate = () => {
      if (terminated) return;
      terminated = true;
      void container!.stop(opts.graceMs);
    };
    const timer = setTimeout(() => {
      result.timedOut = true;
      terminate();
    }, opts.timeoutMs);
    const onAbort = () => {
      result.aborted = true;
      terminate();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();

    const code = await container.exited;
    result.durationMs = Math.round(performance.now() - started);
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    if (terminated && code !== null && code > 128) result.signal = code === 137 ? 'SIGKILL' : 'SIGTERM';
    else if (code !== null && code > 128) {
      // The runner names the signal that killed the agent; a process would report it too.
      const killed = /the agent was killed by (SIG[A-Z0-9]+)/.exec(await container.logTail());
      if (killed) result.signal = killed[1] as NodeJS.Signals;
      else result.exitCode = code;
    } else result.exitCode = code;
    if (!connected && !terminated) {
      const log = await container.logTail();
      result.spawnError = `the agent container exited (code ${code}) before the agent started${log ? `: ${log}` : ''}`;
    }
    await within(Promise.all(streams), PIPE_DRAIN_MS);
    await this.cleanup(container, listeners, ep);
    return result;
  }

  private async cleanup(
    container: AgentContainer | undefined,
    listeners: Forwarder[],
    ep: string,
  ): Promise<void> {
    await container?.remove();
    await Promise.all(listeners.map((l) => l.close()));
    rmSync(ep, { recursive: true, force: true });
  }

  /** A fresh host directory for one container, mounted read-only at EPISODE_MOUNT. */
  containerDir(): string {
    const dir = mkdtempSync(join(this.dir, 'ep-'));
    chmodSync(dir, 0o755);
    return dir;
  }

  /** Stops the forwarders, removes a built image and the socket directory. */
  async close(): Promise<void> {
    const forwards = await Promise.all(this.forwards.values());
    await Promise.all(forwards.map((f) => f.close()));
    this.forwards.clear();
    const image = await this.image?.catch(() => undefined);
    if (image?.built) await removeImage(image.image);
    rmSync(this.dir, { recursive: true, force: true });
    liveDirs.delete(this.dir);
  }
}
