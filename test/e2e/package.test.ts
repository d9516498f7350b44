// What `npx stategate@VERSION` gets: the tarball `npm pack` makes (package.json `files` and `bin`),
// installed alone into an empty directory, run from another directory with no package.json and no
// checkout of this repository. It must carry what its commands read (the demo's suite and agents)
// and pull in nothing that refuses this Node (no EBADENGINE warning).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/version.js';
import { ROOT } from '../helpers/demo-repo.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let root: string;
let bin: string;
let install: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'sg-package-'));
  execFileSync(NPM, ['pack', '--silent', '--pack-destination', root], { cwd: ROOT, encoding: 'utf8' });
  const [tarball] = readdirSync(root).filter((f) => f.endsWith('.tgz'));
  const app = join(root, 'app');
  mkdirSync(app);
  // From npm's cache when it has the packages, else the registry: what npx does.
  const res = spawnSync(
    NPM,
    ['install', '--prefer-offline', '--no-audit', '--no-fund', join(root, tarball)],
    { cwd: app, encoding: 'utf8', timeout: 400_000 },
  );
  if (res.status !== 0) throw new Error(`npm install of ${tarball} failed: ${res.stderr}`);
  install = res.stderr;
  bin = join(app, 'node_modules', '.bin', 'stategate');
}, 420_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function run(cwd: string, args: string[]) {
  const res = spawnSync(bin, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, STATEGATE_DATABASE_URL: TEST_DATABASE_URL, CI: '1' },
    timeout: 400_000,
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

describe('the published package', () => {
  it('installs on this Node with no engine warning', () => {
    expect(install).not.toMatch(/EBADENGINE/);
  });

  it('runs init and validate from a directory that is no Node project', { timeout: 300_000 }, () => {
    const repo = join(root, 'repo');
    mkdirSync(repo);
    const version = run(repo, ['--version']);
    expect(version.stdout).toBe(`${VERSION}\n`);
    expect(run(repo, ['init', '--lang', 'python']).code).toBe(0);
    const validate = run(repo, ['validate', '--engine', 'postgres']);
    expect(validate.stderr).toBe('');
    expect(validate.stdout).toMatch(/stategate\.yml: ok \(2 scenarios, 2 tools/);
  });

  it('runs the demo from an empty directory', { timeout: 420_000 }, () => {
    const empty = join(root, 'empty');
    mkdirSync(empty);
    const demo = run(empty, ['demo', '--engine', 'postgres', '--no-color']);
    expect(demo.stderr).not.toMatch(/stategate: /);
    expect([...demo.stdout.matchAll(/^Stategate: (\w+)/gm)].map((m) => m[1])).toEqual([
      'BLOCK',
      'PASS',
      'PASS',
    ]);
    expect(demo.code).toBe(0);
  });
});
