// What a bubblewrap sandbox lets the agent see, worked out on the host before it starts: the
// system directories, the toolchains its PATH names (a tool-cache Python from setup-python lives
// outside them), and its checkout's git metadata with the credentials actions/checkout persists
// removed from the config files. Everything not named here does not exist inside.
import { existsSync, lstatSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { gitRoots, inside, isDir, realPath } from './namespace-paths.js';

/** Top-level system directories, read-only inside; symlinks among them (merged /usr) kept as such. */
export const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

export type SystemEntry = { kind: 'dir'; path: string } | { kind: 'symlink'; path: string; target: string };

/** The system directories present here, as binds or symlinks. */
export function systemEntries(): SystemEntry[] {
  const out: SystemEntry[] = [];
  for (const path of SYSTEM_DIRS) {
    try {
      const st = lstatSync(path);
      if (st.isSymbolicLink()) out.push({ kind: 'symlink', path, target: readlinkSync(path) });
      else if (st.isDirectory()) out.push({ kind: 'dir', path });
    } catch {
      // Absent on this system.
    }
  }
  return out;
}

function underSystem(path: string): boolean {
  return SYSTEM_DIRS.some((d) => inside(path, d));
}

/**
 * The folders bound read-only so that the programs on `path` run: for a folder named `bin` outside
 * the system directories, its parent (the toolchain's prefix, with its `lib`), else the folder
 * itself. A prefix that holds a path the agent must not see (the checkout's surroundings, a hidden
 * folder, the harness's HOME as a whole) is narrowed to the folder; one inside a hidden folder is
 * left out. `extra` are executables whose toolchain is needed too (the harness's own node).
 */
export function toolchainDirs(path: string, hidden: string[], extra: string[] = []): string[] {
  const dirs = new Set<string>();
  const candidates = path
    .split(':')
    .filter((d) => isAbsolute(d))
    .map((d) => realPath(d));
  for (const exe of extra) candidates.push(dirname(realPath(exe)));
  for (const dir of candidates) {
    if (!isDir(dir) || underSystem(dir) || dir === '/') continue;
    if (hidden.some((h) => inside(dir, h))) continue;
    const prefix = basename(dir) === 'bin' ? dirname(dir) : dir;
    const tooWide = (p: string) => p === '/' || hidden.some((h) => inside(h, p));
    const chosen = !tooWide(prefix) && !underSystem(prefix) ? prefix : dir;
    if (tooWide(chosen)) continue;
    dirs.add(chosen);
  }
  // A folder inside another one already bound adds nothing.
  return [...dirs].filter((d) => ![...dirs].some((o) => o !== d && inside(d, o))).sort();
}

/**
 * The git metadata the agent's checkout needs, read-only inside: that of the nearest repository
 * (its .git, and for a worktree the gitdir and common dir). Enclosing repositories (the workspace
 * around a head-path checkout) are not part of its world and are not mounted.
 */
export function checkoutGitMetadata(checkout: string): string[] {
  return gitRoots(checkout)[0]?.metadata ?? [];
}

/** The config files among the git metadata (each is replaced by a copy without credentials). */
export function gitConfigFiles(metadata: string[]): string[] {
  const files: string[] = [];
  for (const path of metadata) {
    if (!isDir(path)) continue;
    for (const name of ['config', 'config.worktree']) {
      const file = join(path, name);
      try {
        if (statSync(file).isFile()) files.push(file);
      } catch {
        // Not there.
      }
    }
  }
  return files;
}

/**
 * A git config without the credentials a CI checkout leaves in it: `http.*.extraheader` (what
 * actions/checkout persists, the job's token), whole `[credential]` sections (helpers, stored
 * usernames), and user:password in URLs. Everything else is kept as written.
 */
export function withoutCredentials(text: string): string {
  const out: string[] = [];
  let section = '';
  let continued = false;
  for (const line of text.split('\n')) {
    // The rest of a dropped value that ended with a backslash.
    if (continued) {
      continued = /\\\s*$/.test(line);
      continue;
    }
    const header = /^\s*\[\s*([A-Za-z0-9.-]+)/.exec(line);
    if (header) {
      section = header[1].toLowerCase().split('.')[0];
      if (section === 'credential') continue;
      // `[http "https://github.com/"] extraheader = …` on one line is valid git config too.
      if (section === 'http' && /extraheader/i.test(line)) {
        out.push(line.replace(/\].*$/, ']'));
        continue;
      }
    } else if (section === 'credential') continue;
    else if (section === 'http' && /^\s*extraheader\s*(=|$)/i.test(line)) {
      continued = /\\\s*$/.test(line);
      continue;
    }
    out.push(line.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s"]+@/gi, '$1'));
  }
  return out.join('\n');
}

/** The credential-free copy of one git config file's text. */
export function sanitizedGitConfig(file: string): string {
  return withoutCredentials(readFileSync(file, 'utf8'));
}

/** Hidden folders that lie inside `dir` and exist now: covered inside, since `dir` is bound. */
export function coversInside(dir: string, hidden: string[]): string[] {
  return [...new Set(hidden.map((h) => realPath(h)))].filter(
    (h) => h !== dir && inside(h, dir) && existsSync(h),
  );
}
