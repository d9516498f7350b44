// Suite files stay inside the suite directory (the directory of stategate.yml): a name that leaves
// it (`..`, an absolute path) and a link whose real path is outside it are problems at the config
// entry, found before such a file is read, so no message can quote a file from elsewhere.
import { type Dirent, readdir } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { displayPath, suitePath } from './source-file.js';
import type { Problem } from './suite.js';
import type { NamedFile } from './template-files.js';
import { formatPath, problemAt, type YamlSource } from './yaml-source.js';

/** The suite directory as written and as the file system resolves it (through any links). */
export interface SuiteDir {
  root: string;
  realRoot: string;
}

export async function suiteDir(root: string): Promise<SuiteDir> {
  return { root, realRoot: await realpath(root).catch(() => root) };
}

/** Whether `p` is `root` or under it, comparing absolute paths. */
function within(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** Why a name as written in the config leaves the suite directory, or null when it does not. */
export function nameLeaves(name: string): string | null {
  if (path.isAbsolute(name) || path.win32.isAbsolute(name)) return 'is an absolute path';
  const norm = path.posix.normalize(name);
  return norm === '..' || norm.startsWith('../') ? 'leaves the suite directory' : null;
}

/**
 * Where a file really is: inside the suite, outside it (lexically, or through a link), or missing
 * (left to the reader, which says "file not found" without opening anything).
 */
export async function realPlace(dir: SuiteDir, abs: string): Promise<'inside' | 'outside' | 'missing'> {
  if (!within(dir.root, abs)) return 'outside';
  try {
    return within(dir.realRoot, await realpath(abs)) ? 'inside' : 'outside';
  } catch {
    return 'missing';
  }
}

/** "scenarios[0] '../x' leaves the suite directory: suite files must be inside DIR". */
export function outsideProblem(config: YamlSource, named: NamedFile, dir: SuiteDir, why: string): Problem {
  const where = named.field.length > 0 ? `${formatPath(named.field)} ` : '';
  const message = `${where}'${named.name}' ${why}: suite files must be inside ${displayPath(dir.root)}`;
  return problemAt(config, named.field, message);
}

/** The problem with a named file's place (by name, then by real path), or null when it is inside. */
export async function namedFileProblem(
  config: YamlSource,
  named: NamedFile,
  dir: SuiteDir,
): Promise<Problem | null> {
  const leaves = nameLeaves(named.name);
  if (leaves) return outsideProblem(config, named, dir, leaves);
  const place = await realPlace(dir, path.resolve(dir.root, named.name));
  if (place !== 'outside') return null;
  return outsideProblem(config, named, dir, 'is a link to a file outside the suite directory');
}

// Lists a link as a file (never a directory to walk into), so a glob sees every link it matches
// and each one is checked below instead of being skipped or followed out of the suite.
const LINKS_AS_FILES = {
  readdir: (dirPath: string, opts: object, cb: (err: Error | null, entries: Dirent[]) => void) =>
    readdir(dirPath, opts as { withFileTypes: true }, (err, entries) =>
      cb(
        err,
        (entries ?? []).map((e) => (e.isSymbolicLink() ? Object.assign(e, { isFile: () => true }) : e)),
      ),
    ),
};

/**
 * The suite-relative files a glob matches inside the suite; a pattern that leaves it, or a match
 * whose real path is outside, is a problem at the pattern's config entry (that file is dropped).
 */
export async function globInside(
  config: YamlSource,
  pattern: NamedFile,
  dir: SuiteDir,
): Promise<{ files: string[]; problems: Problem[] }> {
  const leaves = nameLeaves(pattern.name);
  if (leaves) return { files: [], problems: [outsideProblem(config, pattern, dir, leaves)] };
  const found = await glob(pattern.name, {
    cwd: dir.root,
    onlyFiles: true,
    expandDirectories: false,
    dot: false,
    followSymbolicLinks: false,
    fs: LINKS_AS_FILES as never,
  });
  const places = await Promise.all(found.map((rel) => realPlace(dir, path.resolve(dir.root, rel))));
  const files: string[] = [];
  const problems: Problem[] = [];
  let left = false;
  found.forEach((rel, i) => {
    const abs = path.resolve(dir.root, rel);
    if (!within(dir.root, abs)) {
      // One problem for the pattern, however many files outside it matched.
      if (!left) problems.push(outsideProblem(config, pattern, dir, 'leaves the suite directory'));
      left = true;
    } else if (places[i] === 'outside') {
      const why = `matches ${suitePath(dir.root, abs)}, a link to a file outside the suite directory`;
      problems.push(outsideProblem(config, pattern, dir, why));
    } else files.push(suitePath(dir.root, abs));
  });
  return { files, problems };
}
