// The agent's sandbox, built by bubblewrap from an allowlist rather than the machine minus a list
// of covers: a fresh root holding only the system directories and the toolchains on its PATH
// (read-only), its side's checkout (git metadata read-only, config without persisted credentials),
// and a /tmp and HOME private to its side (kept between setup and episodes, never shared with the
// other side); its own PID, network (loopback only), IPC and UTS namespaces; and a uid of its own:
// as root, or as a user with passwordless sudo (GitHub's hosted runners), an unprivileged uid with
// no capabilities; otherwise the harness's uid in a user namespace, which the report calls weaker.
// The gateway and, with database.expose, the episode's database are reached through Unix sockets
// the harness serves (the runner in sandbox-runner.ts listens on 127.0.0.1 inside).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { insideUrl } from './container.js';
import type { RunnerTunnel } from './container-runner.js';
import { AGENT_GID, AGENT_HOME, AGENT_UID, type CommandWrapper, type WrappedCommand } from './namespace.js';
import { inside, isDir, realPath } from './namespace-paths.js';
import { processRunning } from './process-group.js';
import {
  checkoutGitMetadata,
  coversInside,
  gitConfigFiles,
  sanitizedGitConfig,
  systemEntries,
  toolchainDirs,
} from './sandbox-paths.js';
import {
  SANDBOX_CALL_MOUNT,
  SANDBOX_RUNNER_SOURCE,
  SANDBOX_SIDE_MOUNT,
  type SandboxRunnerSpec,
} from './sandbox-runner.js';
import { unixForwardServer } from './socket-forward.js';

/** What one command adds to its sandbox: its own call directory (newCall), agent.serve's tunnel. */
export interface CallExtra {
  call?: string;
  /** Paths as seen inside (SANDBOX_CALL_MOUNT/...), served by the harness in `call`. */
  tunnel?: RunnerTunnel;
}

/** A sandbox started ahead (SideSandbox.keepReady), its runner waiting for the harness's go. */
interface ReadySandbox {
  /** Its call folder: the spec goes there once its command is known. */
  call: string;
  /** bwrapArgs without the call folder: a command whose key differs needs another sandbox. */
  key: string;
  child: ChildProcess;
  command: WrappedCommand;
  /**
   * Whether it can still be handed out. Asked of the kernel and the runner's socket, not of the
   * child's exit event: a sandbox killed a moment ago is a zombie until Node handles its SIGCHLD,
   * and handing it out then fails its episode with an exit the agent never made.
   */
  alive(): boolean;
  /** Hands the sandbox to `wrapped` (its child) and tells the runner to read its spec. */
  go(wrapped: WrappedCommand): void;
  /** Stops it and removes its call folder (never taken, or no longer the same sandbox). */
  discard(): void;
}

/** How the sandbox gets its privileges: as root, through sudo, or in a user namespace (weaker). */
export type SandboxVia = 'root' | 'sudo' | 'userns';

export interface SandboxStatus {
  bwrap: string;
  via: SandboxVia;
  /** setpriv, for the privilege drop (root and sudo). */
  setpriv?: string;
  /** sudo, when via is 'sudo'. */
  sudo?: string;
}

export interface SandboxOptions {
  /** The side's checkout: the agent's working directory, writable by the agent where its mode allows. */
  checkout: string;
  /** Harness folders the agent must not see; only those inside something bound need a cover. */
  hide: () => string[];
  status: SandboxStatus;
  /** The Node that runs the runner inside (the harness's own), bound read-only with its prefix. */
  node?: string;
  /**
   * 'host' keeps the machine's network (agent.network: host, from the base's config only); the
   * default is a network namespace of its own with only a loopback.
   */
  network?: 'own' | 'host';
}

// Variables whose URLs point at this machine's loopback; inside, the runner's listeners answer.
const URL_VARS = ['STATEGATE_TOOLS_URL', 'STATEGATE_MCP_URL', 'DATABASE_URL'];
const OUTER_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * bwrap creates the missing folders above a mount point with mode 0700, which the agent's uid could
 * not enter: each is made first, mode 0711, so the agent reaches what is mounted below but cannot
 * list the skeleton (root's HOME above a toolchain shows nothing). Existing folders are left alone.
 */
export function withParents(args: string[], made: Set<string>, target: string): void {
  const parts = target.split('/').filter(Boolean);
  for (let i = 1; i < parts.length; i++) {
    const dir = `/${parts.slice(0, i).join('/')}`;
    if (made.has(dir)) continue;
    made.add(dir);
    args.push('--perms', '0711', '--dir', dir);
  }
}

/**
 * The harness's folders inside a writable bind (the action's .stategate in the checkout): an empty,
 * closed, read-only folder each. Every folder between the bind and a cover is bound onto itself
 * first: a mount point cannot be renamed (EBUSY), and an agent of the harness's own uid (the user
 * namespace mode) that moved a parent away could leave a decoy at the old path for the harness.
 */
function coverArgs(root: string, hidden: string[]): string[] {
  const args: string[] = [];
  const covers = coversInside(root, hidden);
  const pinned = new Set<string>();
  for (const path of covers)
    for (let dir = dirname(path); dir !== root && inside(dir, root); dir = dirname(dir)) pinned.add(dir);
  for (const dir of [...pinned].sort((a, b) => a.length - b.length)) args.push('--bind', dir, dir);
  for (const path of covers) args.push('--perms', '0000', '--tmpfs', path, '--remount-ro', path);
  return args;
}

/** STATEGATE_AGENT_BIND's folders (':'-separated) that exist, outside the checkout and every hidden one. */
export function sharedDirs(env: NodeJS.ProcessEnv, checkout: string, hidden: string[]): string[] {
  const hiddenReal = hidden.map((h) => realPath(h));
  return [
    ...new Set(
      (env.STATEGATE_AGENT_BIND ?? '')
        .split(':')
        .filter((d) => isAbsolute(d) && isDir(d))
        .map((d) => realPath(d)),
    ),
  ].filter((d) => !inside(d, checkout) && !hiddenReal.some((h) => inside(d, h)));
}

/** The uid the agent has inside (and on files it writes). */
export function sandboxAgentUid(status: SandboxStatus): number {
  return status.via === 'userns' ? (process.getuid?.() ?? AGENT_UID) : AGENT_UID;
}

// Side directories not yet removed; removed synchronously if stategate exits first.
const liveSides = new Set<SideSandbox>();
let exitHookInstalled = false;
function removeOnExit(side: SideSandbox): void {
  liveSides.add(side);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const s of liveSides) s.closeSync();
  });
}

/**
 * One side's sandbox: its private /tmp (with HOME), its socket directory, its credential-free git
 * configs, and the forwarders its agents' connections go through. Every command of the side
 * (agent.setup, each episode) gets a fresh sandbox over the same directories.
 */
export class SideSandbox implements CommandWrapper {
  /** Host directory of the side, mode 0700: tmp/, sock/, git/, calls/. */
  readonly dir: string;
  private readonly sock: string;
  private readonly forwards = new Map<string, { server: Server; name: string }>();
  private readonly lifeline: Server;
  private readonly held = new Set<Socket>();
  private readonly configs: { file: string; copy: string }[] = [];
  private readonly gitMeta: string[];
  private closed = false;
  /** Sandboxes started ahead (keepReady()), oldest first, and how many to keep. */
  private readonly ready: ReadySandbox[] = [];
  private readyAhead = 0;
  private readyEnv: Record<string, string> = {};

  constructor(private readonly opts: SandboxOptions) {
    this.dir = mkdtempSync(join(tmpdir(), 'stategate-sandbox-'));
    removeOnExit(this);
    // /tmp inside: sticky and open like a real /tmp, since the agent's uid is not the harness's.
    mkdirSync(join(this.dir, 'tmp'), { mode: 0o1777 });
    chmodSync(join(this.dir, 'tmp'), 0o1777);
    this.sock = join(this.dir, 'sock');
    mkdirSync(this.sock, { mode: 0o755 });
    mkdirSync(join(this.dir, 'git'), { mode: 0o755 });
    mkdirSync(join(this.dir, 'calls'), { mode: 0o755 });
    writeFileSync(join(this.sock, 'runner.js'), SANDBOX_RUNNER_SOURCE, { mode: 0o644 });
    // Held open by every runner; the kernel closes it when the harness dies, however it dies.
    this.lifeline = createServer((s) => {
      this.held.add(s);
      s.on('error', () => undefined);
      s.once('close', () => this.held.delete(s));
    });
    this.lifeline.listen(join(this.sock, 'life.sock'));
    chmodSync(join(this.sock, 'life.sock'), 0o666);
    this.gitMeta = checkoutGitMetadata(opts.checkout);
    for (const [i, file] of gitConfigFiles(this.gitMeta).entries()) {
      const copy = join(this.dir, 'git', `config-${i}`);
      writeFileSync(copy, sanitizedGitConfig(file), { mode: 0o644 });
      this.configs.push({ file, copy });
    }
  }

  /** The socket (as seen inside) that reaches host:port; served from now on. */
  forward(host: string, port: number): string {
    const key = `${host}:${port}`;
    let fw = this.forwards.get(key);
    if (!fw) {
      const name = `fw-${this.forwards.size}.sock`;
      // Accepts from now on, before the sandbox starts.
      fw = { server: unixForwardServer(join(this.sock, name), host, port), name };
      this.forwards.set(key, fw);
    }
    return `${SANDBOX_SIDE_MOUNT}/${fw.name}`;
  }

  /** The agent's environment inside: its own HOME, the URL variables on the runner's listeners. */
  private insideEnv(env: Record<string, string>): {
    env: Record<string, string>;
    forwards: SandboxRunnerSpec['forwards'];
  } {
    const out: Record<string, string> = { ...env, HOME: AGENT_HOME };
    const forwards: SandboxRunnerSpec['forwards'] = [];
    if (this.opts.network === 'host') return { env: out, forwards };
    for (const name of URL_VARS) {
      if (out[name] === undefined) continue;
      const inside = insideUrl(out[name]);
      if (!inside) continue;
      out[name] = inside.url;
      if (!forwards.some((f) => f.port === inside.port))
        forwards.push({ port: inside.port, socket: this.forward(inside.host, inside.port) });
    }
    return { env: out, forwards };
  }

  /** The bwrap arguments for the checkout: at its own path, writable where its owner lets the agent. */
  private checkoutArgs(made: Set<string>): string[] {
    const checkout = realPath(this.opts.checkout);
    const args: string[] = [];
    withParents(args, made, checkout);
    const agentIsOther = this.opts.status.via !== 'userns';
    const mode = statSync(checkout).mode;
    if (agentIsOther && (mode & 0o005) !== 0o005) {
      // A checkout only its owner may enter (a mktemp -d): a fresh open folder carries its entries.
      args.push('--perms', '0755', '--dir', checkout);
      for (const entry of readdirSync(checkout))
        args.push('--bind', join(checkout, entry), join(checkout, entry));
    } else args.push('--bind', checkout, checkout);
    // Git metadata read-only: a hook or core.fsmonitor written there would run as the harness.
    for (const path of this.gitMeta) {
      withParents(args, made, path);
      args.push('--ro-bind', path, path);
    }
    for (const { file, copy } of this.configs) args.push('--ro-bind', copy, file);
    args.push(...coverArgs(checkout, this.opts.hide()));
    // Folders the workflow shares with its agents (STATEGATE_AGENT_BIND, from the harness's own
    // environment, never from a suite), writable as their modes allow.
    for (const dir of sharedDirs(process.env, checkout, this.opts.hide())) {
      withParents(args, made, dir);
      args.push('--bind', dir, dir, ...coverArgs(dir, this.opts.hide()));
    }
    return args;
  }

  /**
   * bwrap's arguments for one command, whose spec is in `call` (mounted at SANDBOX_CALL_MOUNT);
   * with `go`, a sandbox started ahead whose runner waits on that socket (as seen inside).
   */
  private bwrapArgs(call: string, agentPath: string, go?: string): string[] {
    const { status } = this.opts;
    const args = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
    if (this.opts.network !== 'host') args.push('--unshare-net');
    // As a normal user without sudo: a user namespace, in which no further one may be made.
    if (status.via === 'userns') args.push('--unshare-user', '--disable-userns');
    args.push('--die-with-parent');
    for (const e of systemEntries())
      if (e.kind === 'dir') args.push('--ro-bind', e.path, e.path);
      else args.push('--symlink', e.target, e.path);
    const node = this.opts.node ?? process.execPath;
    const made = new Set(['/tmp', '/dev', '/proc']);
    for (const dir of toolchainDirs(agentPath, this.opts.hide(), [node])) {
      withParents(args, made, dir);
      args.push('--ro-bind', dir, dir);
    }
    args.push('--dev', '/dev', '--proc', '/proc', '--bind', join(this.dir, 'tmp'), '/tmp');
    args.push('--tmpfs', '/dev/shm');
    args.push(...this.checkoutArgs(made));
    withParents(args, made, SANDBOX_SIDE_MOUNT);
    args.push('--ro-bind', this.sock, SANDBOX_SIDE_MOUNT, '--ro-bind', call, SANDBOX_CALL_MOUNT);
    args.push('--chdir', realPath(this.opts.checkout), '--remount-ro', '/');
    const runner = [
      node,
      `${SANDBOX_SIDE_MOUNT}/runner.js`,
      `${SANDBOX_CALL_MOUNT}/spec.json`,
      ...(go ? [go] : []),
    ];
    if (status.via === 'userns') return [...args, '--', ...runner];
    // No capabilities, no groups, no way back (no_new_privs: setuid programs do not raise it).
    const drop = [
      status.setpriv ?? 'setpriv',
      `--reuid=${AGENT_UID}`,
      `--regid=${AGENT_GID}`,
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      '--',
    ];
    return [...args, '--', ...drop, ...runner];
  }

  /**
   * A directory of one command, mounted read-only at SANDBOX_CALL_MOUNT: the harness may serve
   * sockets of that command there (agent.serve's tunnel) before it calls wrap with it.
   */
  newCall(): string {
    if (this.closed) throw new Error('the side sandbox is closed');
    const call = mkdtempSync(join(this.dir, 'calls', 'c-'));
    chmodSync(call, 0o755);
    return call;
  }

  /**
   * Keeps `count` sandboxes started ahead for the side's next commands (bwrap, the privilege drop
   * and the runner's Node start: most of a short command's cost), each waiting for its command.
   * A command takes one when its sandbox would be the same (same mounts for its PATH and the
   * folders hidden now), else starts its own. Only for plain commands (no call of their own).
   */
  keepReady(count: number, env: Record<string, string>): void {
    this.readyAhead = count;
    this.readyEnv = env;
    this.refill();
  }

  wrap(command: string, env: Record<string, string> = {}, extra: CallExtra = {}): WrappedCommand {
    if (this.closed) throw new Error('the side sandbox is closed');
    const ready = extra.call || extra.tunnel ? undefined : this.takeReady(env.PATH ?? '');
    const call = ready?.call ?? extra.call ?? this.newCall();
    const inside = this.insideEnv(env);
    // Through sudo the agent is another uid than the harness: stop requests go through a socket.
    let control: Server | undefined;
    let controlled: Socket | undefined;
    if (this.opts.status.via === 'sudo') {
      // The runner connects before the agent starts; a later connection is the agent's.
      control = createServer((s) => {
        s.on('error', () => undefined);
        if (controlled) s.destroy();
        else controlled = s;
      });
      control.listen(join(call, 'ctl.sock'));
      chmodSync(join(call, 'ctl.sock'), 0o666);
    }
    const spec: SandboxRunnerSpec = {
      ...(control ? { control: `${SANDBOX_CALL_MOUNT}/ctl.sock` } : {}),
      command,
      cwd: realPath(this.opts.checkout),
      env: inside.env,
      home: AGENT_HOME,
      forwards: inside.forwards,
      lifeline: `${SANDBOX_SIDE_MOUNT}/life.sock`,
      ...(extra.tunnel ? { tunnel: extra.tunnel } : {}),
    };
    // Readable by the agent's uid: it holds only this command's own environment, and only this
    // command's sandbox mounts the folder.
    writeFileSync(join(call, 'spec.json'), JSON.stringify(spec), { mode: 0o644 });
    const launch = ready?.command ?? this.launchArgs(call, env.PATH ?? '');
    let done = false;
    const wrapped: WrappedCommand = {
      ...launch,
      done: () => {
        if (done) return;
        done = true;
        controlled?.destroy();
        control?.close();
        rmSync(call, { recursive: true, force: true });
      },
      ...(control ? { signal: (sig: NodeJS.Signals) => void controlled?.write(`${sig}\n`) } : {}),
    };
    // The spec is written: the runner may read it.
    ready?.go(wrapped);
    // The next command's sandbox starts while this one runs (one that died unused is replaced only
    // here, so a runner that cannot start costs one start per command, not a loop).
    if (!extra.call && !extra.tunnel) setImmediate(() => this.refill());
    return wrapped;
  }

  /** The command that starts a sandbox for the spec in `call` (its runner waiting on `go`, if given). */
  private launchArgs(call: string, agentPath: string, go?: string): WrappedCommand {
    const bwrap = this.bwrapArgs(call, agentPath, go);
    const { status } = this.opts;
    const outer =
      status.via === 'sudo'
        ? [status.sudo ?? 'sudo', '-n', status.bwrap, ...bwrap]
        : [status.bwrap, ...bwrap];
    return {
      // bwrap itself would die of the group's SIGTERM and --die-with-parent would SIGKILL the agent
      // at once: it ignores it, and the runner inside passes it on to the agent (grace period kept).
      file: '/bin/sh',
      args: ['-c', 'trap "" TERM INT HUP; exec "$@"', 'stategate-sandbox', ...outer],
      env: { PATH: OUTER_PATH },
    };
  }

  /** What makes two sandboxes the same, whatever their call folder (a ready one is taken only if equal). */
  private sandboxKey(agentPath: string): string {
    return JSON.stringify(this.bwrapArgs('', agentPath));
  }

  /** Starts sandboxes ahead until `readyAhead` wait (keepReady()). */
  private refill(): void {
    while (!this.closed && this.ready.length < this.readyAhead) {
      const started = this.startReady(this.readyEnv.PATH ?? '');
      if (!started) return;
      this.ready.push(started);
    }
  }

  /**
   * One sandbox started ahead: bwrap and its runner, spawned as spawnInGroup spawns (its own group,
   * three pipes), the runner waiting on a socket of its call folder for the harness's go.
   */
  private startReady(agentPath: string): ReadySandbox | null {
    const call = this.newCall();
    const command = this.launchArgs(call, agentPath, `${SANDBOX_CALL_MOUNT}/go.sock`);
    const key = this.sandboxKey(agentPath);
    // The runner connects before anything of an agent runs in there; a later connection is refused.
    let runner: Socket | undefined;
    let runnerLost = false;
    let said = false;
    const go = createServer((s) => {
      s.on('error', () => undefined);
      if (runner) s.destroy();
      else {
        runner = s;
        s.once('close', () => {
          runnerLost = true;
        });
      }
    });
    go.listen(join(call, 'go.sock'));
    chmodSync(join(call, 'go.sock'), 0o666);
    let child: ChildProcess;
    try {
      child = spawn(command.file, command.args, {
        cwd: this.opts.checkout,
        env: command.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
    } catch {
      go.close();
      rmSync(call, { recursive: true, force: true });
      return null;
    }
    child.on('error', () => undefined);
    const ready: ReadySandbox = {
      call,
      key,
      child,
      command,
      alive: () =>
        !runnerLost &&
        child.exitCode === null &&
        child.signalCode === null &&
        child.pid !== undefined &&
        processRunning(child.pid),
      go: (wrapped) => {
        said = true;
        wrapped.child = child;
        const tell = () => {
          runner?.write('go\n');
          go.close();
        };
        if (runner) tell();
        else go.once('connection', tell);
      },
      discard: () => {
        go.close();
        runner?.destroy();
        if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            // Through sudo the group is another uid's: the runner exits when its go socket closes.
          }
        }
        rmSync(call, { recursive: true, force: true });
      },
    };
    // One that ends before it is taken (its runner failed) is not handed out.
    child.once('exit', () => {
      const at = this.ready.indexOf(ready);
      if (at >= 0) this.ready.splice(at, 1);
      if (!said) ready.discard();
    });
    return ready;
  }

  /** A sandbox started ahead that is the one a command with this PATH would start, or undefined. */
  private takeReady(agentPath: string): ReadySandbox | undefined {
    if (this.ready.length === 0) return undefined;
    const key = this.sandboxKey(agentPath);
    let taken: ReadySandbox | undefined;
    const keep: ReadySandbox[] = [];
    for (const r of this.ready.splice(0)) {
      // One whose process is gone, or whose mounts differ from this command's (the checkout's
      // entries, the folders hidden, the toolchains on PATH), is not this command's sandbox.
      if (!r.alive() || r.key !== key) r.discard();
      else if (!taken) taken = r;
      else keep.push(r);
    }
    this.ready.push(...keep);
    return taken;
  }

  /** Stops the forwarders and removes the side's directories. */
  async close(): Promise<void> {
    this.readyAhead = 0;
    for (const r of this.ready.splice(0)) r.discard();
    const servers = [...[...this.forwards.values()].map((f) => f.server), this.lifeline];
    for (const s of this.held) s.destroy();
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    this.closeSync();
  }

  closeSync(): void {
    this.closed = true;
    for (const r of this.ready.splice(0)) r.discard();
    liveSides.delete(this);
    try {
      rmSync(this.dir, { recursive: true, force: true });
    } catch (err) {
      // Through sudo the agent's HOME and files are another uid's: removed as root.
      const { status } = this.opts;
      if (status.via !== 'sudo') throw err;
      spawnSync(status.sudo ?? 'sudo', ['-n', 'rm', '-rf', '--', this.dir], { stdio: 'ignore' });
    }
  }
}
