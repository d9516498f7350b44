// Installs bubblewrap for the agent sandbox where it is missing, for the action only. Why: GitHub's
// hosted runners (ubuntu-24.04) do not ship the `bubblewrap` package, and their Ubuntu refuses
// unprivileged user namespaces, so without it neither the sandbox nor the unshare fallback runs
// there and the head's agent is refused. The job's user has passwordless sudo, which is what the
// sandbox uses anyway: `sudo -n apt-get install bubblewrap` gives every hosted run the sandbox.
// The command line never installs packages on its own: its refusal and isolation note say how.
// A failed install is a warning; the run then probes as before, and fails closed as before.
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { SudoMode } from '../config/options.js';
import { harnessExecutable } from '../sandbox/harness-path.js';
import { findExecutable } from './namespace-probe.js';
import { INSTALL_HINT, sudoWorks } from './sandbox-probe.js';

/** Where the Debian and Ubuntu package puts bwrap: found there when PATH does not name that folder. */
export const PACKAGED_BWRAP = '/usr/bin/bwrap';
/** How long the install (with one `apt-get update`) may take before it is given up. */
export const INSTALL_TIMEOUT_MS = 300_000;

export interface BubblewrapInstallOptions {
  /** The name (looked up on PATH) or path bwrap is looked up by; `bwrap` by default. */
  bwrap?: string;
  /** `never` installs nothing (no sudo, and nothing done as root either). */
  sudo: SudoMode;
  /** The progress lines: what is about to run, and what happened. */
  log: (level: 'info' | 'warn', message: string) => void;
  /** The whole install's bound (both apt-get runs). */
  timeoutMs?: number;
}

export type BubblewrapInstall =
  /** bwrap was there already, or was installed: `bwrap` is its path. */
  | { state: 'present' | 'installed'; bwrap: string }
  /** Not attempted (not Linux, sudo: never, no passwordless sudo, no apt-get), or it failed. */
  | { state: 'not-attempted' | 'failed'; reason: string };

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The last lines apt-get wrote, for the log. */
function tail(text: string, lines = 4): string {
  return text.trim().split('\n').slice(-lines).join(' | ').slice(0, 600);
}

function duration(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${Math.round(ms / 1000)}s`;
}

interface Ran {
  code: number | null;
  output: string;
  timedOut: boolean;
}

function run(file: string, args: string[], timeoutMs: number): Promise<Ran> {
  return new Promise((done) => {
    let output = '';
    let timedOut = false;
    const child = spawn(file, args, {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        DEBIAN_FRONTEND: 'noninteractive',
        LC_ALL: 'C',
        // apt-get as root reads a proxy from these (sudo keeps its own list of what passes).
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(https?|no)_proxy$/i.test(k))),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // sudo passes SIGTERM on to apt-get; SIGKILL after a grace period if that is not enough.
    const timer = setTimeout(
      () => {
        timedOut = true;
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      },
      Math.max(1, timeoutMs),
    );
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    child.on('error', (err) => {
      clearTimeout(timer);
      done({ code: null, output: `${output}\n${err.message}`, timedOut });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, output, timedOut });
    });
  });
}

/** apt-get's answers when its package lists are missing or out of date. */
const STALE_LISTS =
  /Unable to locate package|has no installation candidate|Failed to fetch|404\s+Not Found|is not available, but is referred to/;

/**
 * bwrap's path, installing the `bubblewrap` package first where it is missing, on Linux, with
 * `sudo: auto`, as root or through passwordless `sudo -n`, with apt-get. Never throws.
 */
export async function ensureBubblewrap(opts: BubblewrapInstallOptions): Promise<BubblewrapInstall> {
  const name = opts.bwrap ?? 'bwrap';
  const found = findExecutable(name);
  if (found !== null) return { state: 'present', bwrap: found };
  const missing = `${name}: not found`;
  if (process.platform !== 'linux')
    return {
      state: 'not-attempted',
      reason: `${missing}; bubblewrap needs Linux, this is ${process.platform}`,
    };
  if (opts.sudo === 'never')
    return { state: 'not-attempted', reason: `${missing}; not installed with sudo: never (${INSTALL_HINT})` };
  const asRoot = process.getuid?.() === 0;
  // Only from folders no agent can write: apt-get runs as root.
  const aptGet = harnessExecutable('apt-get');
  if (!isAbsolute(aptGet))
    return { state: 'not-attempted', reason: `${missing}; no apt-get to install it with` };
  let prefix: string[] = [];
  if (!asRoot) {
    const sudo = harnessExecutable('sudo');
    if (!isAbsolute(sudo) || !sudoWorks(sudo))
      return {
        state: 'not-attempted',
        reason: `${missing}; no passwordless sudo to install it with (${INSTALL_HINT})`,
      };
    // sudo resets the environment: env sets apt-get's own.
    prefix = [sudo, '-n', 'env', 'DEBIAN_FRONTEND=noninteractive', 'LC_ALL=C'];
  }
  const via = asRoot ? 'apt-get install bubblewrap' : 'sudo apt-get install bubblewrap';
  opts.log('info', `installing bubblewrap for the agent sandbox (${via})`);
  const deadline = Date.now() + (opts.timeoutMs ?? INSTALL_TIMEOUT_MS);
  const left = () => deadline - Date.now();
  const apt = (args: string[]) => {
    const argv = [...prefix, aptGet, '-o', 'DPkg::Lock::Timeout=60', ...args];
    return run(argv[0], argv.slice(1), left());
  };
  const install = () => apt(['install', '-y', '--no-install-recommends', 'bubblewrap']);
  let res = await install();
  let updated = false;
  if (res.code !== 0 && !res.timedOut && STALE_LISTS.test(res.output) && left() > 0) {
    opts.log('info', 'bubblewrap: the package lists are stale, running apt-get update once and retrying');
    const update = await apt(['update']);
    updated = true;
    if (update.code === 0 && !update.timedOut && left() > 0) res = await install();
    else
      res = {
        // An update that succeeded with no time left for the install is a timeout, not a success.
        code: update.code === 0 ? null : update.code,
        timedOut: update.timedOut || update.code === 0,
        output: `apt-get update: ${update.output}`,
      };
  }
  if (res.code !== 0) {
    const why = res.timedOut
      ? `timed out after ${duration(opts.timeoutMs ?? INSTALL_TIMEOUT_MS)}`
      : `exited with code ${res.code}${updated ? ' (after apt-get update)' : ''}: ${tail(res.output)}`;
    const reason = `${missing}; installing bubblewrap (${via}) failed: ${why}`;
    opts.log('warn', reason);
    return { state: 'failed', reason };
  }
  const bwrap = findExecutable(name) ?? (executable(PACKAGED_BWRAP) ? PACKAGED_BWRAP : null);
  if (bwrap === null) {
    const reason = `${missing}; apt-get installed bubblewrap but ${name} is still not found`;
    opts.log('warn', reason);
    return { state: 'failed', reason };
  }
  // What apt-get did: "bubblewrap is already the newest version", or "Setting up bubblewrap" and the count.
  const said = res.output
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /bubblewrap|newly installed/.test(l) && !/^(Reading|Building)/.test(l))
    .slice(-3)
    .join(' ');
  opts.log('info', `bubblewrap: ${bwrap} (apt-get: ${said || tail(res.output, 1)})`);
  return { state: 'installed', bwrap };
}
