// The stategate command as a user runs it: the bundled CLI (bin/stategate.mjs, dist/cli.js) in a
// child process, with the test server as the postgres engine's fallback URL.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './demo-repo.js';
import { TEST_DATABASE_URL } from './engines.js';

export interface CliResult {
  code: number | null;
  /** The command's process id (the owner its databases' comments name). */
  pid: number;
  stdout: string;
  stderr: string;
}

/** Runs `stategate ARGS...` in `cwd`; `env` adds to (or, with undefined, removes from) the environment. */
export function stategate(
  cwd: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): CliResult {
  const merged = { ...process.env, STATEGATE_DATABASE_URL: TEST_DATABASE_URL, CI: '1', ...env };
  const res = spawnSync(process.execPath, [join(ROOT, 'bin', 'stategate.mjs'), ...args], {
    cwd,
    encoding: 'utf8',
    env: Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined)),
    timeout: 300_000,
  });
  return { code: res.status, pid: res.pid, stdout: res.stdout, stderr: res.stderr };
}

/** A new directory holding the suite `stategate init --lang python` writes; throws if init fails. */
export function initializedSuite(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const init = stategate(dir, ['init', '--lang', 'python']);
  if (init.code !== 0) throw new Error(init.stderr);
  return dir;
}
