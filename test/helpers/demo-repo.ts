// A real git repository holding the demo suite, one tagged commit per agent version.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..', '..');

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}

/** Copies the demo suite into `dir` with the agent at `version`. */
export function writeDemoFiles(dir: string, version: string): void {
  cpSync(join(ROOT, 'stategate.yml'), join(dir, 'stategate.yml'));
  cpSync(join(ROOT, 'scenarios'), join(dir, 'scenarios'), { recursive: true });
  cpSync(join(ROOT, 'examples', 'refund-agent'), join(dir, 'examples', 'refund-agent'), { recursive: true });
  cpSync(
    join(dir, 'examples', 'refund-agent', 'versions', `${version}.json`),
    join(dir, 'examples', 'refund-agent', 'manifest.json'),
  );
}

/** A repository with one commit per version, tagged with the version; HEAD at the last. */
export function demoRepo(versions: string[]): { repo: string; shas: Record<string, string> } {
  const repo = mkdtempSync(join(tmpdir(), 'sg-demo-repo-'));
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.email', 'ci@example.com');
  git(repo, 'config', 'user.name', 'ci');
  const shas: Record<string, string> = {};
  for (const v of versions) {
    writeDemoFiles(repo, v);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', `refund agent ${v}`);
    git(repo, 'tag', v);
    shas[v] = git(repo, 'rev-parse', 'HEAD');
  }
  return { repo, shas };
}
