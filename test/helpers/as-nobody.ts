// Running as nobody: the tests run as root and start the namespace runner, git, or the whole
// harness as uid 65534, the stand-in for the normal user a hosted runner runs the harness as (the
// agent then keeps that uid). Also the folders and the demo repository that user owns.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { runCommandAgent } from '../../src/agent/command.js';
import { type CommandWrapper, namespaceWrapper } from '../../src/agent/namespace.js';
import type { AgentRun } from '../../src/model/episode.js';
import { agentSharedDir, projectForOthers } from './agent-dir.js';
import { commitTagged, type DemoChanges, initRepo, ROOT, writeBlockingScenario } from './demo-repo.js';
import { TEST_DATABASE_URL } from './engines.js';

/** Whether the tests run as root: only then can they start anything as nobody. */
export const AS_ROOT = process.getuid?.() === 0;
/** nobody's uid, and its gid. */
export const NOBODY = 65534;

const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Removes `path` after the test file. */
export function removeAfterFile(path: string): string {
  made.push(path);
  return path;
}

/** setpriv's arguments that run `file args` as nobody, in no supplementary group but `groups`. */
export function nobodyArgs(file: string, args: string[], groups: number[] = []): string[] {
  const groupArg = groups.length > 0 ? `--groups=${groups.join(',')}` : '--clear-groups';
  return [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, groupArg, '--', file, ...args];
}

/** `inner` (the namespace runner) started by nobody: a harness run by a normal user. */
export function asNobody(inner: CommandWrapper, groups: number[] = []): CommandWrapper {
  return {
    wrap(command) {
      const { file, args } = inner.wrap(command);
      return { file: 'setpriv', args: nobodyArgs(file, args, groups) };
    },
  };
}

/** Runs a program as nobody outside any namespace; throws when it fails, else returns its stdout trimmed. */
export function runAsNobody(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): string {
  return execFileSync('setpriv', nobodyArgs(file, args), {
    cwd,
    encoding: 'utf8',
    env,
    stdio: 'pipe',
  }).trim();
}

/** The git hook an agent plants for the harness to run later: its `core.fsmonitor` writes $HARNESS_TOKEN to a file. */
export interface FsmonitorTrap {
  /** The agent's shell line that sets the hook with `git <gitArgs> config` (or says it was refused). */
  plant(gitArgs?: string[]): string;
  /** git run later by the harness's user outside any namespace (a later step, the next job) with `token`; its exit is not looked at. */
  laterGit(cwd: string, args: string[], token: string): void;
  /** What reached the file: '' when the hook never ran. */
  leaked(): string;
}

/** A trap whose file is in a new folder of nobody's (`prefix`). */
export function fsmonitorTrap(prefix: string): FsmonitorTrap {
  const leak = join(nobodysDir(prefix), 'token');
  return {
    plant: (gitArgs = []) =>
      `git ${[...gitArgs, ''].join(' ')}config core.fsmonitor 'echo "$HARNESS_TOKEN" > ${leak}; false' 2>&1 || echo refused`,
    laterGit(cwd, args, token) {
      spawnSync('setpriv', nobodyArgs('git', args), {
        cwd,
        env: { PATH: process.env.PATH, HARNESS_TOKEN: token },
        stdio: 'pipe',
      });
    },
    leaked: () => (existsSync(leak) ? readFileSync(leak, 'utf8') : ''),
  };
}

/** Gives `path` and everything below it to nobody. */
export function chownToNobody(path: string): void {
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, path]);
}

/** A new folder outside the /tmp agents get afresh, nobody's, removed after the file. */
export function nobodysDir(prefix: string): string {
  const dir = removeAfterFile(mkdtempSync(join('/var/tmp', prefix)));
  chownSync(dir, NOBODY, NOBODY);
  return dir;
}

/** Makes `dir` (still root's: git refuses a repository of another user) a git repository with `file` committed. */
export function oneCommitRepo(dir: string, file: string): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  git('init', '-q');
  execFileSync('sh', ['-c', `echo x > ${file}`], { cwd: dir });
  git('add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', file);
  return dir;
}

export interface NobodysAgent {
  /** The agent's shell command line; it should end by printing a result. */
  command: string;
  /** The agent's checkout and working directory. */
  checkout: string;
  hide?: string[];
  /** The harness's HOME: the agent's too, and what the namespace guards in it. */
  home?: string;
  runtimeSockets?: string[];
  /** Supplementary groups the harness's user is in (none by default). */
  groups?: number[];
}

/** The last line an agent command prints: the result the harness waits for. */
export const REPLY_DONE = 'echo \'{"reply":"done"}\'';

/** Runs `command` as an episode's agent (a minute at most) in namespaces started by nobody, the harness's user. */
export function runAgentAsNobody(agent: NobodysAgent): Promise<AgentRun> {
  const { command, checkout, hide = [], home, runtimeSockets, groups } = agent;
  return runCommandAgent({
    command,
    cwd: checkout,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...(home ? { HOME: home } : {}) },
    input: { message: 'hi', context: {} },
    timeoutMs: 60_000,
    wrapper: asNobody(
      namespaceWrapper({ checkout, hide, asRoot: false, uid: NOBODY, gid: NOBODY, home, runtimeSockets }),
      groups,
    ),
  });
}

/** A command that tries each of `tries` (shell commands, by name) and prints `name: done` for each that worked. */
export function tryEach(tries: Record<string, string>): string {
  return [
    ...Object.entries(tries).map(([name, cmd]) => `(${cmd}) 2>/dev/null && echo "${name}: done"`),
    REPLY_DONE,
  ].join('\n');
}

/** The names of the tries that worked, from the agent's output. */
export function triesDone(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((l) => l.endsWith(': done'))
    .map((l) => l.slice(0, -': done'.length));
}

export interface HarnessRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** What fixtures/compare-as.mts prints: the gate's verdict, each case's class, the baseline cache line. */
export interface HarnessOutcome {
  verdict: string;
  cases: [string, string][];
  baseline_cache: { hit: boolean; saved: boolean; key: string } | null;
}

/** The outcome a harness run printed last; throws with its stderr when it failed. */
export function outcomeOf(run: HarnessRun): HarnessOutcome {
  const last = run.stdout.trim().split('\n').at(-1) ?? '';
  if (run.code !== 0 || !last.startsWith('{')) throw new Error(`compare exited ${run.code}:\n${run.stderr}`);
  return JSON.parse(last) as HarnessOutcome;
}

/**
 * The demo repository of a normal user: a folder open to agents holding nobody's HOME and the
 * repository, commits of the demo trimmed to its blocking scenario, and the harness run as nobody
 * from a copy of the project nobody can read. Everything is removed after the test file.
 */
export class NobodysDemoRepo {
  readonly top: string;
  readonly home: string;
  readonly repo: string;
  /** The project nobody runs the harness from. */
  readonly project: string;
  /** ~/.local/bin, the user's own folder that hosted runners put first on PATH. */
  readonly userBin: string;
  readonly #path: string;

  /** With `userBinFirst` every program of the user's runs with userBin first on its PATH, as on the hosted runners. */
  constructor(prefix: string, { userBinFirst = false } = {}) {
    this.top = removeAfterFile(agentSharedDir(prefix));
    const project = projectForOthers(ROOT);
    if (project.copy) removeAfterFile(project.copy);
    this.project = project.path;
    this.home = join(this.top, 'home');
    this.repo = join(this.top, 'repo');
    this.userBin = join(this.home, '.local', 'bin');
    this.#path = userBinFirst ? `${this.userBin}:${process.env.PATH}` : (process.env.PATH ?? '/usr/bin:/bin');
  }

  /** The user's environment: its PATH and HOME, and `extra`. */
  env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    // Folders the test shares with the agents' sandbox (test/helpers/agent-dir.ts), passed on.
    const bind = process.env.STATEGATE_AGENT_BIND;
    return { PATH: this.#path, HOME: this.home, ...(bind ? { STATEGATE_AGENT_BIND: bind } : {}), ...extra };
  }

  /** Creates HOME, the repository (empty, on main) and `dirs`, all nobody's. */
  init(dirs: string[] = []): void {
    for (const d of [this.home, this.repo, ...dirs]) mkdirSync(d, { recursive: true });
    chownToNobody(this.top);
    initRepo((...args) => this.git(...args));
  }

  /** git as nobody in the repository. */
  git(...args: string[]): string {
    return runAsNobody('git', args, this.repo, this.env());
  }

  /** Commits the demo at `version` trimmed to its blocking scenario, with `changes`, as `tag`. */
  commit(version: string, tag: string, changes: DemoChanges = {}): void {
    writeBlockingScenario(this.repo, version, changes);
    chownToNobody(this.repo);
    commitTagged((...args) => this.git(...args), tag);
  }

  /** One comparison of `head` against tag `base` (one repeat, the test server) run by nobody, with `env` added. */
  compare(
    head: string,
    options: Record<string, unknown> = {},
    env: NodeJS.ProcessEnv = {},
  ): Promise<HarnessRun> {
    const opts = {
      base: 'base',
      head,
      repo: this.repo,
      repeats: 1,
      engine: 'postgres',
      databaseUrl: TEST_DATABASE_URL,
      ...options,
    };
    const script = join(this.project, 'test', 'security', 'fixtures', 'compare-as.mts');
    const args = nobodyArgs(process.execPath, ['--import', 'tsx', script, JSON.stringify(opts)]);
    return new Promise((done, fail) => {
      const child = spawn('setpriv', args, {
        cwd: this.project,
        env: this.env(env),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => {
        stdout += d;
      });
      child.stderr.on('data', (d: Buffer) => {
        stderr += d;
      });
      child.on('error', fail);
      child.on('close', (code) => done({ code, stdout, stderr }));
    });
  }
}
