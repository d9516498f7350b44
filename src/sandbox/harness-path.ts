// The programs the harness itself runs (git, and tar for the Actions caches) come only from PATH
// folders an agent cannot write. As a normal user the agent is the harness's own uid, and on
// GitHub's hosted runners PATH starts with that user's folders (~/.local/bin, ~/.cargo/bin): a
// `git` an agent left there would run as the harness, outside every namespace, with its tokens.
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

/** Whether the agent could create or replace an entry of `dir`, or rename a folder above it. */
function agentWritable(dir: string, asRoot: boolean): boolean {
  for (let d = dir; ; d = dirname(d)) {
    try {
      if (asRoot) {
        // As root the agent is nobody: only what others may write is its.
        if ((statSync(d).mode & 0o002) !== 0) return true;
      } else {
        accessSync(d, constants.W_OK);
        return true;
      }
    } catch {
      // Not writable (or gone): look further up.
    }
    if (d === dirname(d)) return false;
  }
}

/** The folders of `path` that exist and that no agent can write; in their order. */
export function harnessPathDirs(
  path: string = process.env.PATH ?? '',
  asRoot: boolean = process.getuid?.() === 0,
): string[] {
  return path.split(':').filter((dir) => {
    if (!isAbsolute(dir)) return false;
    try {
      if (!statSync(dir).isDirectory()) return false;
    } catch {
      // Absent: an agent may create it.
      return false;
    }
    return !agentWritable(dir, asRoot);
  });
}

/**
 * The absolute path of a program for the harness to run, from the folders above; the bare name
 * (PATH as is) when none has it, as where the only copy is the user's an agent could change it anyway.
 */
export function harnessExecutable(name: string): string {
  for (const dir of harnessPathDirs()) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      // Not here.
    }
  }
  return name;
}

/** Runs `fn` with PATH cut to those folders (for libraries that look programs up themselves). */
export async function withHarnessPath<T>(fn: () => Promise<T>): Promise<T> {
  const saved = process.env.PATH;
  const dirs = harnessPathDirs(saved);
  if (dirs.length > 0) process.env.PATH = dirs.join(':');
  try {
    return await fn();
  } finally {
    if (saved === undefined) delete process.env.PATH;
    else process.env.PATH = saved;
  }
}
