// A directory both a test and its agents can write. Agents run with a /tmp of their own, and as an
// unprivileged user when the tests run as root, so it lives outside /tmp and is open to all.
import { chmodSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function agentSharedDir(prefix: string): string {
  const dir = mkdtempSync(join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), prefix));
  chmodSync(dir, 0o777);
  return dir;
}
