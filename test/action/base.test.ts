// The base commit in a real git repository: present, missing from a shallow clone (fetched), absent.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BaseError, resolveBase } from '../../src/action/base.js';

const root = mkdtempSync(join(tmpdir(), 'stategate-base-'));
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

let baseSha: string;
let headSha: string;
const origin = join(root, 'origin.git');
const work = join(root, 'work');

beforeAll(() => {
  git(root, 'init', '-q', '-b', 'main', work);
  writeFileSync(join(work, 'agent.txt'), 'v1\n');
  git(work, 'add', '.');
  git(work, 'commit', '-q', '-m', 'base');
  baseSha = git(work, 'rev-parse', 'HEAD');
  git(work, 'branch', 'release');
  writeFileSync(join(work, 'agent.txt'), 'v2\n');
  git(work, 'commit', '-q', '-am', 'head');
  headSha = git(work, 'rev-parse', 'HEAD');
  git(root, 'clone', '-q', '--bare', work, origin);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function shallowClone(name: string): string {
  const dir = join(root, name);
  git(root, 'clone', '-q', '--depth=1', `file://${origin}`, dir);
  return dir;
}

describe('resolveBase', () => {
  it('uses the event base when the clone has it', async () => {
    expect(await resolveBase({ baseRef: null, eventBaseSha: baseSha }, work)).toEqual({
      sha: baseSha,
      source: 'event',
      fetched: false,
    });
  });

  it('fetches the event base that a shallow clone lacks', async () => {
    const dir = shallowClone('shallow-1');
    expect(() => git(dir, 'cat-file', '-e', `${baseSha}^{commit}`)).toThrow();
    expect(await resolveBase({ baseRef: null, eventBaseSha: baseSha }, dir)).toEqual({
      sha: baseSha,
      source: 'event',
      fetched: true,
    });
    expect(git(dir, 'cat-file', '-t', baseSha)).toBe('commit');
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(headSha);
  });

  it('resolves base-ref locally, or fetches it by name', async () => {
    expect(await resolveBase({ baseRef: 'HEAD~1', eventBaseSha: null }, work)).toEqual({
      sha: baseSha,
      source: 'base-ref',
      fetched: false,
    });
    // A shallow single-branch clone of main knows nothing of the release branch.
    const dir = shallowClone('shallow-2');
    expect(await resolveBase({ baseRef: 'release', eventBaseSha: null }, dir)).toEqual({
      sha: baseSha,
      source: 'base-ref',
      fetched: true,
    });
  });

  it('has no base without an event base or base-ref', async () => {
    expect(await resolveBase({ baseRef: null, eventBaseSha: null }, work)).toBeNull();
  });

  it('says which base could not be fetched', async () => {
    const missing = 'd'.repeat(40);
    const err = await resolveBase({ baseRef: null, eventBaseSha: missing }, shallowClone('shallow-3')).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(BaseError);
    expect(err.message).toContain(
      `the base ${missing} is not in this clone and git fetch --depth=1 origin ${missing} failed`,
    );
  });
});
