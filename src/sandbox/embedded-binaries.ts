// The embedded server's binaries where the server's user can run them. As root, PostgreSQL runs as
// the `postgres` user, which cannot enter a checkout under /root or a `mktemp -d`: there the
// package's binaries are copied once into a root-owned directory everyone may read, and reused.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, lstatSync, mkdtempSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

export interface Binaries {
  initdb: string;
  postgres: string;
}

type User = { uid: number; gid: number };

/** True when `user` can execute `file` (every directory on the way must let it through). */
function canRun(file: string, user: User): boolean {
  const probe = spawnSync('/bin/sh', ['-c', 'test -x "$1"', 'sh', file], {
    uid: user.uid,
    gid: user.gid,
    env: { PATH: '/usr/bin:/bin' },
    stdio: 'ignore',
  });
  return probe.status === 0;
}

/** A copy is trusted only when root owns it and nobody else may write it. */
function trustedCopy(dir: string): boolean {
  try {
    const s = lstatSync(dir);
    return s.isDirectory() && s.uid === 0 && (s.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/**
 * `bins` when `user` (null: not root) can run them; otherwise a copy of their package directory
 * (bin, lib, share) in a shared temporary directory, keyed by where they came from and their size
 * and time, so later runs on the machine reuse it.
 */
export function reachableBinaries(bins: Binaries, user: User | null): Binaries {
  if (!user || canRun(bins.initdb, user)) return bins;
  const home = dirname(dirname(realpathSync(bins.initdb)));
  const stamp = statSync(realpathSync(bins.postgres));
  const key = createHash('sha256')
    .update(`${home}\0${stamp.size}\0${stamp.mtimeMs}`)
    .digest('hex')
    .slice(0, 16);
  const target = join(tmpdir(), `stategate-postgres-bin-${key}`);
  const inTarget = (b: Binaries): Binaries => ({
    initdb: join(target, relative(home, realpathSync(b.initdb))),
    postgres: join(target, relative(home, realpathSync(b.postgres))),
  });
  if (trustedCopy(target) && canRun(inTarget(bins).initdb, user)) return inTarget(bins);
  if (lstatExists(target)) {
    // Someone else's directory, or a broken copy: make a private one for this run instead.
    return copyInto(mkdtempSync(join(tmpdir(), 'stategate-postgres-bin-')), home, bins, user);
  }
  const staging = mkdtempSync(join(tmpdir(), `stategate-postgres-bin-${key}-`));
  const copied = copyInto(staging, home, bins, user);
  try {
    // Atomic: a concurrent run either finds the whole copy or makes its own.
    renameSync(staging, target);
    return inTarget(bins);
  } catch {
    return copied;
  }
}

function lstatExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function copyInto(dir: string, home: string, bins: Binaries, user: User): Binaries {
  cpSync(home, dir, { recursive: true, verbatimSymlinks: true });
  spawnSync('chmod', ['-R', 'go+rX,go-w', dir], { stdio: 'ignore' });
  const out = {
    initdb: join(dir, relative(home, realpathSync(bins.initdb))),
    postgres: join(dir, relative(home, realpathSync(bins.postgres))),
  };
  if (!canRun(out.initdb, user)) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `the embedded engine runs PostgreSQL as the postgres user, which cannot run ${bins.initdb} nor a copy in ${tmpdir()}: ` +
        'run stategate from a directory other users can enter, or use `engine: postgres` with `url:`.',
    );
  }
  return out;
}
