// Process isolation without containers: each agent process tree (an episode, agent.setup, or a
// side's agent.serve) runs in its own PID and mount namespaces through util-linux `unshare`. A
// small init (PID 1 of the namespace) hides the harness's files under empty filesystems, gives the
// agent a private /tmp, drops privileges, runs the agent, and exits with it; when PID 1 exits the
// kernel kills every process left in the namespace, daemons included. Where bubblewrap runs, the
// sandbox of sandbox.ts is used instead (agent.serve excepted); without either the caller falls back
// to process groups and says so.

import type { ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { runtimeCandidates } from '../sandbox/container-runtime.js';
import { gitMetadata, gitRoots, guardedAncestors, inside, isDir, realPath } from './namespace-paths.js';
import type { SandboxStatus } from './sandbox.js';

export { gitMetadata, gitRoots, guardedAncestors } from './namespace-paths.js';

/** The unprivileged identity an agent runs as when the harness is root (nobody). */
export const AGENT_UID = 65534;
export const AGENT_GID = 65534;
/** Where the checkout is mounted when its own path cannot be reached by the agent's user. */
export const NEUTRAL_CHECKOUT = '/tmp/stategate-checkout';
/** The agent's HOME when the harness is root: a fresh directory in the namespace's own /tmp. */
export const AGENT_HOME = '/tmp/stategate-home';

const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** What to spawn instead of /bin/sh -c; `env` replaces the agent's, `done` runs once it exited. */
export interface WrappedCommand {
  file: string;
  args: string[];
  env?: Record<string, string>;
  done?: () => void;
  /** Passes a signal to the agent where the harness may not send it itself (another uid, via sudo). */
  signal?: (signal: NodeJS.Signals) => void;
  /**
   * Already running (a sandbox started ahead, spawned as spawnInGroup spawns: its own group, three
   * pipes): used instead of spawning `file`.
   */
  child?: ChildProcess;
}

/** Runs a shell command line inside an agent namespace or sandbox, with the agent's environment. */
export interface CommandWrapper {
  wrap(command: string, env?: Record<string, string>): WrappedCommand;
}

export type IsolationStatus =
  | {
      mode: 'namespaces';
      asRoot: boolean;
      /** util-linux unshare, when it works here: the fallback without bubblewrap, and for agent.serve. */
      unshare?: string;
      setpriv?: string;
      /** The bubblewrap sandbox (sandbox.ts), preferred for every agent.command and agent.setup. */
      sandbox?: SandboxStatus;
      /** Why there is no sandbox, when there is none. */
      sandboxReason?: string;
    }
  | { mode: 'process-groups'; reason: string };

/** The one line the run's log and report carry about agent isolation. */
export function isolationLine(status: IsolationStatus): string {
  if (status.mode === 'process-groups')
    return `agent isolation: process groups only (${status.reason}); use agent.isolation: container`;
  const sb = status.sandbox;
  if (sb) {
    const who =
      sb.via === 'userns'
        ? "agent keeps the harness's uid in a user namespace (weaker: no root or passwordless sudo)"
        : `agent runs as uid ${AGENT_UID}${sb.via === 'sudo' ? ' (through sudo)' : ''}`;
    return `agent isolation: PID and mount namespaces in a bubblewrap sandbox (allowlisted filesystem, loopback-only network), ${who}`;
  }
  // The unshare fallback: the machine minus harness paths covered one by one, not an allowlist.
  const why = status.sandboxReason ? ` (no bubblewrap sandbox: ${status.sandboxReason})` : '';
  const fallback = 'the unshare fallback, weaker: the machine with harness paths covered one by one';
  return status.asRoot
    ? `agent isolation: PID and mount namespaces (${fallback}), agent runs as uid ${AGENT_UID}${why}`
    : `agent isolation: PID, mount and user namespaces (${fallback})${why}`;
}

export interface NamespaceOptions {
  /** The side's checkout (the agent's working directory). */
  checkout: string;
  /** Directories the agent must neither read nor write; an empty filesystem is mounted over each. */
  hide: string[];
  /** Whether the harness runs as root (then the agent runs as AGENT_UID). */
  asRoot: boolean;
  /** The harness's uid and gid, kept by the agent when the harness is not root. */
  uid: number;
  gid: number;
  /** The unshare binary (default `unshare` on PATH). */
  unshare?: string;
  /** With it, unshare gets SIGKILL when the harness dies, even by SIGKILL, and the namespace with it. */
  setpriv?: string;
  /** The harness's HOME (covered when root and only root can enter it). */
  home?: string;
  /**
   * Container runtime sockets (Docker, Podman) to cover: the harness's user may be in their group,
   * and a user namespace cannot drop supplementary groups, so the agent would reach a root daemon.
   */
  runtimeSockets?: string[];
  /** The harness's DOCKER_CONFIG, read-only to the agent like ~/.docker. */
  dockerConfig?: string;
}

/** Single-quotes a string for /bin/sh. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Whether users other than the owner may enter the directory and every directory above it. */
function othersCanEnter(path: string): boolean {
  let dir = resolve(path);
  for (;;) {
    try {
      if ((statSync(dir).mode & 0o001) === 0) return false;
    } catch {
      return false;
    }
    const up = resolve(dir, '..');
    if (up === dir) return true;
    dir = up;
  }
}

/** Directories that get a fresh, empty, writable filesystem: the agent's own /tmp and /dev/shm. */
function scratchDirs(opts: NamespaceOptions): string[] {
  const dirs = ['/tmp', resolve(tmpdir()), '/dev/shm'];
  // As root, a HOME only root can enter (/root) holds nothing the agent may use; covering it lets
  // a checkout below it appear at its own path.
  if (opts.asRoot && opts.home && resolve(opts.home) !== '/' && !othersCanEnter(opts.home))
    dirs.push(resolve(opts.home));
  return [...new Set(dirs)].filter(isDir);
}

/**
 * The harness user's config files that make the harness (stategate's git, a later run's Docker
 * client) run something, when the agent shares the harness's HOME: git config, Testcontainers'
 * properties (`docker.host`, `tc.host`) and Docker's config (credential helpers).
 */
function homeHarnessConfig(opts: NamespaceOptions): { files: string[]; dirs: string[] } | null {
  if (opts.asRoot || !opts.home || !isAbsolute(opts.home) || !isDir(opts.home)) return null;
  return {
    files: [join(opts.home, '.gitconfig'), join(opts.home, '.testcontainers.properties')],
    dirs: [join(opts.home, '.config', 'git'), opts.dockerConfig ?? join(opts.home, '.docker')],
  };
}

/** Where the checkout appears inside the namespace and how it gets there. */
function placement(
  opts: NamespaceOptions,
  scratch: string[],
): { target: string; how: 'in-place' | 'bind' | 'entries' } {
  const checkout = resolve(opts.checkout);
  const covered = scratch.some((d) => inside(checkout, d));
  const reachable = !opts.asRoot || othersCanEnter(checkout);
  if (!covered && reachable) return { target: checkout, how: 'in-place' };
  // The ancestors are recreated on a fresh filesystem, so only the checkout's own mode matters.
  const ownModeOk = !opts.asRoot || (statSync(checkout).mode & 0o005) === 0o005;
  const target = covered || reachable ? checkout : NEUTRAL_CHECKOUT;
  return { target, how: ownModeOk ? 'bind' : 'entries' };
}

/** The init script run as PID 1 of the namespace; the agent's command line is its $1. */
export function initScript(opts: NamespaceOptions): string {
  const checkout = resolve(opts.checkout);
  const scratch = scratchDirs(opts);
  const { target, how } = placement(opts, scratch);
  const q = shellQuote;
  const lines = [
    'set -e',
    // The agent's PATH is the agent's; the tools below come from the system's.
    'sg_path=${PATH-}',
    `PATH=${SYSTEM_PATH}`,
    `cd -- ${q(checkout)}`,
  ];
  // Git metadata is read-only to the agent: a core.fsmonitor, hook or gitdir it wrote would run
  // later, outside the namespace, as the harness's user (stategate's own git, later workflow
  // steps). Done first, so every later mount (placement of the checkout included) carries it, and
  // locked by the privilege drop below.
  // A checkout inside a larger repository (the action's head-path inside the workspace): the rest
  // of that repository is read-only to the agent (the workspace's own files, .github/actions,
  // scripts later steps run), and the checkout is bound back writable on top.
  const outer = gitRoots(checkout).at(-1);
  if (outer && outer.top !== checkout && outer.top !== '/') {
    lines.push(
      `{ mount --bind -- ${q(outer.top)} ${q(outer.top)} && mount -o remount,bind,ro -- ${q(outer.top)} && mount --bind -- ${q(checkout)} ${q(checkout)}; } || { echo ${q(`stategate: cannot make ${outer.top} read-only for the agent; use agent.isolation: container`)} >&2; exit 1; }`,
    );
  }
  const readOnly = gitMetadata(checkout);
  const config = homeHarnessConfig(opts);
  if (config) {
    // An absent config would be created by the agent: an empty one (what its reader reads when
    // there is none) is made to be covered. A HOME the harness cannot write, the agent cannot either.
    for (const file of config.files)
      lines.push(`if [ ! -e ${q(file)} ] && [ ! -L ${q(file)} ]; then (: > ${q(file)}) 2>/dev/null || :; fi`);
    for (const dir of config.dirs) lines.push(`mkdir -p -- ${q(dir)} 2>/dev/null || :`);
    readOnly.push(...config.files, ...config.dirs);
  }
  for (const path of readOnly)
    lines.push(
      `if [ -e ${q(path)} ]; then`,
      // Fails closed: an agent that could write git metadata does not start.
      `  { mount --bind -- ${q(path)} ${q(path)} && mount -o remount,bind,ro -- ${q(path)}; } || { echo ${q(`stategate: cannot make ${path} read-only for the agent; use agent.isolation: container`)} >&2; exit 1; }`,
      'fi',
    );
  // A container runtime's socket is root in all but name: covered, failing closed like git above.
  for (const sock of opts.runtimeSockets ?? [])
    lines.push(
      `if [ -e ${q(sock)} ]; then mount --bind -- /dev/null ${q(sock)} || { echo ${q(`stategate: cannot cover ${sock} for the agent; use agent.isolation: container`)} >&2; exit 1; }; fi`,
    );
  // An ancestor of the checkout cannot be hidden without hiding the checkout; a path already under
  // a scratch directory disappears with it.
  const hide = [...new Set(opts.hide.map((p) => realPath(p)))].filter(
    (p) => !inside(checkout, p) && !scratch.some((d) => inside(p, d) && !inside(checkout, d)),
  );
  // Every folder above a hidden or read-only path is bound onto itself, so it is a mount point in
  // the agent's namespace and cannot be renamed (EBUSY). A cover belongs to the folder it was
  // mounted on, not to its path: an agent of the harness's own uid that renamed a parent could
  // otherwise leave a decoy at the old path, which the next namespace would cover, with the real
  // folder in the open under its new name, and the harness would read the decoy by its path later.
  for (const dir of guardedAncestors([...readOnly, ...(opts.runtimeSockets ?? []), ...hide], scratch))
    lines.push(
      `if [ -d ${q(dir)} ]; then mount --rbind -- ${q(dir)} ${q(dir)} || { echo ${q(`stategate: cannot pin ${dir} for the agent; use agent.isolation: container`)} >&2; exit 1; }; fi`,
    );
  for (const path of hide)
    lines.push(
      `if [ -d ${q(path)} ]; then mount -t tmpfs -o mode=000,size=4k,nosuid,nodev,noexec stategate-private ${q(path)}; fi`,
    );
  // The working directory was entered before the mounts above: entered again, it is the checkout as
  // they left it (relative paths such as .git or ../.stategate reach the covers and read-only binds,
  // and a bind of "." below carries them).
  lines.push(`cd -- ${q(checkout)}`);
  for (const dir of scratch)
    lines.push(`mount -t tmpfs -o mode=1777,nosuid,nodev stategate-scratch ${q(dir)}`);
  if (how !== 'in-place') {
    lines.push(`mkdir -p -- ${q(target)}`);
    // Sources are relative to the (now covered) checkout held as the working directory; mount must
    // not turn them back into paths, which would name the new, empty filesystem.
    if (how === 'bind') lines.push(`mount --no-canonicalize --rbind . ${q(target)}`);
    else {
      // The checkout's own directory is closed to the agent's user: a fresh, open directory
      // carries its entries instead.
      lines.push(
        `chmod 755 ${q(target)}`,
        'for e in * .[!.]* ..?*; do',
        '  if [ -L "$e" ]; then cp -P -- "$e" ' + `${q(target)}/"$e"; continue; fi`,
        '  [ -e "$e" ] || continue',
        `  if [ -d "$e" ]; then mkdir -- ${q(target)}/"$e"; else : > ${q(target)}/"$e"; fi`,
        `  mount --no-canonicalize --rbind "./$e" ${q(target)}/"$e"`,
        'done',
      );
    }
    lines.push(`cd -- ${q(target)}`);
  }
  let drop: string;
  if (opts.asRoot) {
    lines.push(
      `mkdir -m 700 ${AGENT_HOME}`,
      `chown ${AGENT_UID}:${AGENT_GID} ${AGENT_HOME}`,
      `export HOME=${AGENT_HOME}`,
    );
    lines.push('sg_drop=$(command -v setpriv)');
    drop = `"$sg_drop" --reuid=${AGENT_UID} --regid=${AGENT_GID} --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs --`;
  } else {
    // A nested user namespace maps the agent back to the harness's uid without capabilities; the
    // mounts above become locked in it, so they cannot be undone from inside.
    lines.push('sg_drop=$(command -v unshare)');
    drop = `"$sg_drop" --user --map-user=${opts.uid} --map-group=${opts.gid} --mount --`;
  }
  lines.push(
    'set +e',
    'if [ -n "$sg_path" ]; then PATH=$sg_path; else unset PATH; fi',
    // PID 1 gets only the signals it handles: pass a stop request on to the agent.
    'trap \'kill -TERM "$child" 2>/dev/null\' TERM INT HUP',
    // A background job's stdin would be /dev/null: hand it the real one through fd 3.
    'exec 3<&0',
    `${drop} /bin/sh -c "$1" <&3 3<&- &`,
    'child=$!',
    'exec 3<&-',
    'while :; do wait "$child"; status=$?; kill -0 "$child" 2>/dev/null || break; done',
    'exit "$status"',
  );
  return lines.join('\n');
}

/** The unshare arguments that create the namespaces; PID 1 dies with unshare, and all else with it. */
function unshareArgs(asRoot: boolean): string[] {
  const ns = ['--pid', '--fork', '--kill-child', '--mount-proc', '--mount', '--propagation', 'private'];
  return asRoot ? ns : ['--user', '--map-root-user', ...ns];
}

/** A wrapper that runs each command line in fresh namespaces as described by `opts`. */
export function namespaceWrapper(opts: NamespaceOptions | (() => NamespaceOptions)): CommandWrapper {
  return {
    wrap(command) {
      // Options are read at spawn time: private paths registered later are hidden too.
      const o = typeof opts === 'function' ? opts() : opts;
      const unshare = o.unshare ?? 'unshare';
      const args = [...unshareArgs(o.asRoot), '/bin/sh', '-c', initScript(o), 'stategate-init', command];
      return o.setpriv
        ? { file: o.setpriv, args: ['--pdeathsig', 'KILL', '--', unshare, ...args] }
        : { file: unshare, args };
    },
  };
}

export function harnessIds(): { uid: number; gid: number; asRoot: boolean } {
  const uid = process.getuid?.() ?? -1;
  return { uid, gid: process.getgid?.() ?? -1, asRoot: uid === 0 };
}

/** The options for the harness as it runs: root or not, its ids and HOME. */
export function harnessNamespaceOptions(
  checkout: string,
  hide: string[],
  unshare?: string,
  setpriv?: string,
): NamespaceOptions {
  return {
    checkout,
    hide,
    ...harnessIds(),
    home: process.env.HOME,
    unshare,
    setpriv,
    runtimeSockets: runtimeSocketPaths(process.env),
    ...(process.env.DOCKER_CONFIG ? { dockerConfig: resolve(process.env.DOCKER_CONFIG) } : {}),
  };
}

/** Every Unix socket a container runtime may listen on for this harness (DOCKER_HOST included). */
export function runtimeSocketPaths(env: NodeJS.ProcessEnv): string[] {
  const paths = runtimeCandidates(env).flatMap((t) => ('path' in t ? [t.path] : []));
  paths.push('/var/run/docker.sock', '/run/docker.sock', '/run/podman/podman.sock');
  if (env.XDG_RUNTIME_DIR) paths.push(join(env.XDG_RUNTIME_DIR, 'podman', 'podman.sock'));
  return [...new Set(paths.map((p) => resolve(p)))];
}

export { findExecutable, probeIsolation } from './namespace-probe.js';
