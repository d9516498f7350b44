// A real git repository of the demo agent with a base commit and one branch per pull request, plus
// a bare "origin" to clone shallowly from, the way actions/checkout does.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT } from './runner.js';

export const git = (cwd: string, ...args: string[]): string =>
  execFileSync(
    'git',
    ['-c', 'user.name=Dev', '-c', 'user.email=dev@example.com', '-c', 'init.defaultBranch=main', ...args],
    {
      cwd,
      encoding: 'utf8',
    },
  ).trim();

/** A pull request branch: its name and head commit. */
export interface Branch {
  name: string;
  sha: string;
}

export interface DemoRepo {
  origin: string;
  base: Branch;
  branches: Record<string, Branch>;
}

/** A change a PR makes on top of the base: files to write, relative to the repository root. */
export type Change = (dir: string) => void;

/** Uses one of examples/refund-agent/versions/*.json as the agent's manifest. */
export const agentVersion =
  (version: string): Change =>
  (dir) =>
    writeFileSync(
      join(dir, 'examples/refund-agent/manifest.json'),
      readFileSync(join(dir, `examples/refund-agent/versions/v${version}.json`)),
    );

/**
 * Builds the repository under `root` from the demo (stategate.yml, the agent, the named scenarios):
 * main with the `base` changes, one branch per entry of `prs`.
 */
export function makeDemoRepo(
  root: string,
  scenarios: string[],
  base: Change[],
  prs: Record<string, Change[]>,
): DemoRepo {
  const work = join(root, 'work');
  mkdirSync(work, { recursive: true });
  git(root, 'init', '-q', work);
  for (const path of [
    'stategate.yml',
    'examples/refund-agent',
    ...scenarios.map((s) => `scenarios/${s}.yaml`),
  ]) {
    cpSync(join(PROJECT, path), join(work, path), { recursive: true });
  }
  for (const change of base) change(work);
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'the refund agent and its stategate suite');
  const main = { name: 'main', sha: git(work, 'rev-parse', 'HEAD') };
  const branches: Record<string, Branch> = {};
  for (const [name, changes] of Object.entries(prs)) {
    git(work, 'checkout', '-q', '-b', name, 'main');
    for (const change of changes) change(work);
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', name);
    branches[name] = { name, sha: git(work, 'rev-parse', 'HEAD') };
  }
  git(work, 'checkout', '-q', 'main');
  const origin = join(root, 'origin.git');
  git(root, 'clone', '-q', '--bare', work, origin);
  return { origin, base: main, branches };
}

/** A fresh shallow checkout of one branch, as actions/checkout makes it (depth 1: the base is missing). */
export function checkout(repo: DemoRepo, branch: string, dir: string): string {
  git(join(dir, '..'), 'clone', '-q', '--depth=1', '--branch', branch, `file://${repo.origin}`, dir);
  return dir;
}
