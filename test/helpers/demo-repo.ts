// A real git repository holding the demo suite, one tagged commit per agent version, or the demo
// trimmed to its one blocking scenario with a head's changes.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** The demo scenario whose head (v1.3.0) is a new critical failure: the one a run must BLOCK on. */
export const BLOCKING_SCENARIO = 'refund-timeout-after-mutation';

/** What a head changes in the demo: files it adds, its own agent script, an agent.setup command. */
export interface DemoChanges {
  files?: Record<string, string>;
  /** The script `node` runs instead of examples/refund-agent/agent.mjs. */
  agent?: string;
  setup?: string;
}

/** writeDemoFiles with BLOCKING_SCENARIO alone (one episode a side), and the head's changes. */
export function writeBlockingScenario(dir: string, version: string, changes: DemoChanges = {}): void {
  writeDemoFiles(dir, version);
  for (const f of readdirSync(join(dir, 'scenarios')))
    if (f !== `${BLOCKING_SCENARIO}.yaml`) rmSync(join(dir, 'scenarios', f));
  for (const [name, text] of Object.entries(changes.files ?? {})) writeFileSync(join(dir, name), text);
  const config = join(dir, 'stategate.yml');
  let text = readFileSync(config, 'utf8');
  if (changes.agent) text = text.replace('examples/refund-agent/agent.mjs', changes.agent);
  if (changes.setup) text = text.replace('agent:\n', `agent:\n  setup: ${changes.setup}\n`);
  writeFileSync(config, text);
}

/** Makes the folder `git` runs in an empty repository on `main`, with an author for its commits. */
export function initRepo(git: (...args: string[]) => unknown): void {
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'ci@example.com');
  git('config', 'user.name', 'ci');
}

/** Commits everything in the repository `git` runs in with `tag` as the message, and tags it. */
export function commitTagged(git: (...args: string[]) => unknown, tag: string): void {
  git('add', '-A');
  git('commit', '-qm', tag);
  git('tag', tag);
}

/** A repository with one commit per version, tagged with the version; HEAD at the last. */
export function demoRepo(versions: string[]): { repo: string; shas: Record<string, string> } {
  const repo = mkdtempSync(join(tmpdir(), 'sg-demo-repo-'));
  initRepo((...args) => git(repo, ...args));
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
