import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveCheckout } from '../../src/run/checkout.js';

function repoWithTwoCommits(): { repo: string; first: string } {
  const repo = mkdtempSync(join(tmpdir(), 'sg-checkout-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 't');
  writeFileSync(join(repo, 'version.txt'), 'one\n');
  git('add', '.');
  git('commit', '-qm', 'one');
  const first = git('rev-parse', 'HEAD');
  git('tag', 'v1');
  writeFileSync(join(repo, 'version.txt'), 'two\n');
  git('commit', '-qam', 'two');
  return { repo, first };
}

describe('resolveCheckout', () => {
  it('checks a ref out into a worktree and removes it afterwards', async () => {
    const { repo, first } = repoWithTwoCommits();
    const c = await resolveCheckout('v1', repo);
    expect(c.sha).toBe(first);
    expect(readFileSync(join(c.dir, 'version.txt'), 'utf8')).toBe('one\n');
    expect(readFileSync(join(repo, 'version.txt'), 'utf8')).toBe('two\n');
    await c.dispose();
    expect(existsSync(c.dir)).toBe(false);
    expect(existsSync(join(c.dir, '..'))).toBe(false);
    expect(
      execFileSync('git', ['worktree', 'list'], { cwd: repo, encoding: 'utf8' }).trim().split('\n'),
    ).toHaveLength(1);
  });

  it('uses a directory in place', async () => {
    const { repo } = repoWithTwoCommits();
    const c = await resolveCheckout('.', repo);
    expect(c.dir).toBe(repo);
    expect(c.sha).toMatch(/^[0-9a-f]{40}$/);
  });

  it('names what it could not resolve', async () => {
    const { repo } = repoWithTwoCommits();
    await expect(resolveCheckout('no-such-ref', repo)).rejects.toThrow(
      /'no-such-ref' is neither a directory nor a git ref/,
    );
  });
});
