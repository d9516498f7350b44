// Where the embedded server's files go by default: /dev/shm where it is a tmpfs with room (every
// clone copies some 300 files; on a disk the filesystem's journal made a pool several times
// slower), else the OS temp dir: never a filesystem that is not memory, and never a tmpfs too
// small for a run's databases.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultDataParent } from '../../src/sandbox/embedded-server.js';

const asRoot = process.getuid?.() === 0;
const scratch = mkdtempSync(join(tmpdir(), 'sg-data-parent-'));
const mounted: string[] = [];
afterAll(() => {
  for (const dir of mounted) execFileSync('umount', [dir]);
  rmSync(scratch, { recursive: true, force: true });
});

describe('the embedded server default data directory', () => {
  it('is the OS temp dir when the place is not a tmpfs, or is not there', () => {
    // The scratch folder is on the temp dir's filesystem: a disk here, not a tmpfs.
    const onDisk = execFileSync('stat', ['-f', '-c', '%T', scratch], { encoding: 'utf8' }).trim();
    if (onDisk !== 'tmpfs') expect(defaultDataParent(scratch)).toBe(tmpdir());
    expect(defaultDataParent(join(scratch, 'missing'))).toBe(tmpdir());
  });

  it.runIf(asRoot)('is a tmpfs with room, and not a tmpfs too small for a run', () => {
    const big = join(scratch, 'big');
    const small = join(scratch, 'small');
    for (const [dir, size] of [
      [big, '4g'],
      [small, '64m'],
    ]) {
      execFileSync('mkdir', [dir]);
      // A tmpfs takes no memory until written: 4g here costs nothing.
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=1777`, 'tmpfs', dir]);
      mounted.push(dir);
    }
    expect(defaultDataParent(big)).toBe(big);
    expect(defaultDataParent(small)).toBe(tmpdir());
  });
});
