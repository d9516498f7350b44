// What the sandbox shows of the machine, worked out before it starts: the credentials a CI checkout
// persists are gone from the git config the agent reads (the rest kept as written), and the folders
// bound for its PATH are the toolchains' prefixes, never a folder that holds a hidden one.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { toolchainDirs, withoutCredentials } from '../../src/agent/sandbox-paths.js';

const cleanup: string[] = [];
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

describe('the git config the agent reads', () => {
  it('has no persisted token, credential section or password in a URL, and keeps the rest', () => {
    const config = [
      '[core]',
      '\trepositoryformatversion = 0',
      '[remote "origin"]',
      '\turl = https://x-access-token:ghs_secret1@github.com/o/r',
      '\tfetch = +refs/heads/*:refs/remotes/origin/*',
      '[http "https://github.com/"]',
      '\textraheader = AUTHORIZATION: basic c2VjcmV0Mg==',
      '\tsslVerify = true',
      '[http]',
      '\tExtraHeader = X-Token: \\',
      '\t  secret3',
      '[credential "https://github.com"]',
      '\thelper = store --file /home/runner/.git-credentials',
      '\tusername = secret4',
      '[http "https://example.com/"] extraheader = secret5',
      '[user]',
      '\tname = ci',
    ].join('\n');
    const clean = withoutCredentials(config);
    for (const secret of ['ghs_secret1', 'c2VjcmV0Mg', 'secret3', 'secret4', 'secret5', 'helper'])
      expect(clean).not.toContain(secret);
    expect(clean).toContain('\turl = https://github.com/o/r');
    expect(clean).toContain('\tsslVerify = true');
    expect(clean).toContain('\tname = ci');
    expect(clean).toContain('[http "https://example.com/"]');
    expect(clean).toContain('\trepositoryformatversion = 0');
  });
});

describe('the toolchains bound for PATH', () => {
  it('binds a bin folder with its prefix, narrows a prefix that holds a hidden folder, skips hidden ones', () => {
    const root = mkdtempSync(join(tmpdir(), 'sg-toolchains-'));
    cleanup.push(root);
    const python = join(root, 'tool', 'Python', '3.12.0', 'x64');
    const home = join(root, 'home');
    for (const d of [
      join(python, 'bin'),
      join(python, 'lib'),
      join(home, 'bin'),
      join(home, 'secret'),
      join(root, 'hidden', 'bin'),
    ])
      mkdirSync(d, { recursive: true });
    const dirs = toolchainDirs(
      [join(python, 'bin'), join(home, 'bin'), join(root, 'hidden', 'bin'), '/usr/bin', 'relative/bin'].join(
        ':',
      ),
      [join(home, 'secret'), join(root, 'hidden')],
    );
    expect(dirs).toEqual([join(home, 'bin'), python].sort());
  });
});
