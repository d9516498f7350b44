// What ships in dist/ for the action: a bundle that needs no node_modules, whose stack traces point
// at src/ through its source map, and the license notices of every package bundled into it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionCopy, PROJECT } from './runner.js';

const DIST = join(PROJECT, 'dist');
let bundle: string;
let map: { sources: string[]; sourcesContent?: unknown };

beforeAll(() => {
  if (!existsSync(join(DIST, 'action.js')))
    throw new Error(`${DIST}/action.js is missing: run npm run build first`);
  bundle = readFileSync(join(DIST, 'action.js'), 'utf8');
  map = JSON.parse(readFileSync(join(DIST, 'action.js.map'), 'utf8'));
});

/**
 * The package directories (…/node_modules/name) of the files the bundle's source map names. A
 * package's own source map can send a source outside any package (or to a src/ it does not ship);
 * a source is counted for the package directory it is under, when that has a package.json.
 */
function bundledPackageDirs(): string[] {
  const dirs = new Set<string>();
  for (const source of map.sources) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(resolve(DIST, source));
    if (m && existsSync(join(m[1], 'package.json'))) dirs.add(m[1]);
  }
  return [...dirs].sort();
}

/** The source file and 1-based line the map gives for the first occurrence of `text` in the bundle. */
function original(text: string): { file: string; line: string } {
  const at = bundle.indexOf(text);
  if (at < 0) throw new Error(`the bundle has no ${JSON.stringify(text)}`);
  const before = bundle.slice(0, at);
  const line = before.split('\n').length - 1;
  const column = at - (before.lastIndexOf('\n') + 1);
  const entry = new SourceMap(map as never).findEntry(line, column) as {
    originalSource?: string;
    originalLine?: number;
  };
  if (!entry.originalSource) throw new Error(`no mapping at ${line}:${column}`);
  const file = entry.originalSource.startsWith('file:')
    ? fileURLToPath(entry.originalSource)
    : resolve(DIST, entry.originalSource);
  return { file, line: readFileSync(file, 'utf8').split('\n')[entry.originalLine ?? -1] ?? '' };
}

describe('the action bundle', () => {
  it('maps its code back to the src/ file and line, without carrying the sources', () => {
    const rateLimit = original('GitHub rate limit on ');
    expect(rateLimit.file).toBe(join(PROJECT, 'src/action/github.ts'));
    expect(rateLimit.line).toContain('GitHub rate limit on ');
    const noStategateYml = original('no stategate.yml here');
    expect(noStategateYml.file.startsWith(join(PROJECT, 'src') + '/')).toBe(true);
    expect(noStategateYml.line).toContain('no stategate.yml here');
    expect(map.sourcesContent).toBeUndefined();
  });

  it('holds the GitHub client and the container stack itself: a runner has no node_modules', () => {
    const names = bundledPackageDirs().map((d) => d.slice(d.lastIndexOf('node_modules/') + 13));
    for (const name of [
      '@actions/github',
      '@actions/http-client',
      'undici',
      'testcontainers',
      '@testcontainers/postgresql',
      'dockerode',
    ]) {
      expect(names).toContain(name);
    }
    // One copy of undici: two versions doubled the bundle's largest dependency.
    expect(names.filter((n) => n === 'undici')).toHaveLength(1);
  });

  it('turns source maps on before loading the bundle, when run as the runner runs it', () => {
    const root = mkdtempSync(join(tmpdir(), 'stategate-bundle-'));
    try {
      const entry = actionCopy(join(root, 'action'));
      const bundleUrl = new URL(`file://${join(dirname(entry), 'action.js')}`).href;
      // Runs at exit, after the action has failed on its empty environment: did Node load the bundle's
      // map, and does it send a position in the bundle back to src/?
      const probe = `import { findSourceMap } from 'node:module'; import { readFileSync } from 'node:fs';
        process.on('exit', () => {
          const map = findSourceMap(${JSON.stringify(bundleUrl)});
          const code = readFileSync(new URL(${JSON.stringify(bundleUrl)}), 'utf8');
          const at = code.indexOf('GitHub rate limit on '), before = code.slice(0, at);
          const entry = map ? map.findEntry(before.split('\\n').length - 1, at - before.lastIndexOf('\\n') - 1) : null;
          process.stderr.write('\\nPROBE ' + JSON.stringify(entry ? entry.originalSource ?? 'no entry' : 'no map') + '\\n');
        });`;
      const run = spawnSync(
        process.execPath,
        ['--import', `data:text/javascript,${encodeURIComponent(probe)}`, entry],
        {
          cwd: root,
          env: { PATH: process.env.PATH },
          encoding: 'utf8',
          timeout: 120_000,
        },
      );
      expect(run.stdout).toMatch(/::error::GITHUB_REPOSITORY must be OWNER\/REPO/);
      const probed = /PROBE (.*)/.exec(run.stderr)?.[1];
      expect(probed, run.stderr).toBeDefined();
      expect(JSON.parse(probed as string)).toMatch(/src\/action\/github\.ts$/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('dist/licenses.txt', () => {
  let entries: Map<string, { license: string; text: string }>;

  beforeAll(() => {
    const text = readFileSync(join(DIST, 'licenses.txt'), 'utf8');
    entries = new Map();
    for (const section of text.split(`\n${'='.repeat(80)}\n`).slice(1)) {
      const [id, license, ...rest] = section.split('\n');
      entries.set(id, { license: license.replace(/^License: /, ''), text: rest.join('\n') });
    }
  });
  afterAll(() => {
    entries.clear();
  });

  it('names every package in the action bundle, with its version, license and license file text', () => {
    const dirs = bundledPackageDirs();
    expect(dirs.length).toBeGreaterThan(50);
    for (const dir of dirs) {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      const entry = entries.get(`${pkg.name}@${pkg.version}`);
      expect(entry, `${pkg.name}@${pkg.version} (${dir})`).toBeDefined();
      if (typeof pkg.license === 'string') expect(entry?.license).toBe(pkg.license);
      const licenseFile = readdirSync(dir).find((f) => /^licen[cs]e(\.(md|txt))?$/i.test(f));
      if (licenseFile) {
        const firstLine = readFileSync(join(dir, licenseFile), 'utf8').trim().split(/\r?\n/)[0].trim();
        expect(entry?.text, `${pkg.name}: ${licenseFile}`).toContain(firstLine);
      }
    }
  });

  it('carries the MIT notice of undici and the Apache notice of the container client', () => {
    const undici = [...entries].find(([id]) => id.startsWith('undici@'));
    expect(undici?.[1].license).toBe('MIT');
    expect(undici?.[1].text).toMatch(/Permission is hereby granted, free of charge/);
    const dockerode = [...entries].find(([id]) => id.startsWith('dockerode@'));
    expect(dockerode?.[1].license).toBe('Apache-2.0');
    expect(dockerode?.[1].text).toMatch(/Apache License/);
  });
});
