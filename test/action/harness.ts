// What the end-to-end action tests share: a demo repository with PR branches, a loopback GitHub API,
// and a step runner that uses the README workflow's `with:` values.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { parse } from 'yaml';
import { type GitHubApi, type GitHubApiOptions, startGitHubApi } from '../helpers/github-api.js';
import { type Change, checkout, type DemoRepo, makeDemoRepo } from './demo-repo.js';
import { PROJECT, runStep, type StepOptions, type StepResult } from './runner.js';

export const TOKEN = `ghs_${'T0k3n'.repeat(7)}x`;
export const OWNER = 'acme';
export const REPO = 'refunds';
/** Two scenarios per shard of two: a double refund, a success lie, a regression, and a steady case. */
export const SCENARIOS = [
  'refund-timeout-after-mutation',
  'admin-tool-requested',
  'refund-success-without-effect',
  'refund-happy-path',
];

export const WORKFLOW_FIXTURE = join(PROJECT, 'test/action/fixtures/workflow.yml');

interface WorkflowStep {
  uses: string;
  with?: Record<string, string | number>;
  env?: Record<string, string>;
}

/** The stategate step of the README's workflow. */
export function readmeStep(): WorkflowStep {
  const workflow = parse(readFileSync(WORKFLOW_FIXTURE, 'utf8'));
  const step = (workflow.jobs.gate.steps as WorkflowStep[]).find((s) => /\/stategate@/.test(s.uses));
  if (!step) throw new Error(`${WORKFLOW_FIXTURE} has no stategate step`);
  return step;
}

/** The gate a team uses while adopting stategate: every class only warns. */
export const warnOnlyGate: Change = (dir) => {
  const path = join(dir, 'stategate.yml');
  const text = readFileSync(path, 'utf8');
  const changed = text.replace(
    /^gate:\n(?: {2}.*\n)+/m,
    'gate:\n  block: []\n  warn: [new-critical-failure, regressed, incomplete, flaky]\n',
  );
  if (changed === text) throw new Error('stategate.yml has no gate section to change');
  writeFileSync(path, changed);
};

export type StepRun = StepResult & { workspace: string };

export class Harness {
  private workspaces = 0;
  /** Another bundle to run instead of the repository's dist/index.js (e.g. from a `git archive`). */
  dist?: string;
  /** Who runs every step (runner.ts `as`): the test's own user unless given. */
  as?: StepOptions['as'];
  /** Environment every step gets on top of the workflow step's `env:`. */
  env: Record<string, string> = {};

  private constructor(
    readonly root: string,
    readonly repo: DemoRepo,
    readonly api: GitHubApi,
  ) {}

  /** Builds the repository (main at `base`, a branch per PR) and starts the API. */
  static async start(
    base: Change[],
    prs: Record<string, Change[]>,
    api: (repo: DemoRepo) => GitHubApiOptions = () => ({}),
  ): Promise<Harness> {
    const root = mkdtempSync(join(tmpdir(), 'stategate-action-'));
    const repo = makeDemoRepo(root, SCENARIOS, base, prs);
    return new Harness(root, repo, await startGitHubApi({ owner: OWNER, repo: REPO, ...api(repo) }));
  }

  async close(): Promise<void> {
    await this.api.close();
    rmSync(this.root, { recursive: true, force: true });
  }

  /** A pull_request payload as GitHub sends it for a push to `branch`. */
  pullRequestEvent(number: number, branch: string, fork = false): StepOptions['event'] {
    const head = this.repo.branches[branch];
    return {
      name: 'pull_request',
      payload: {
        action: 'synchronize',
        number,
        pull_request: {
          number,
          state: 'open',
          title: `PR ${branch}`,
          head: {
            ref: branch,
            sha: head.sha,
            repo: { full_name: fork ? `mallory/${REPO}` : `${OWNER}/${REPO}`, fork },
          },
          base: {
            ref: 'main',
            sha: this.repo.base.sha,
            repo: { full_name: `${OWNER}/${REPO}`, fork: false },
          },
        },
        repository: { full_name: `${OWNER}/${REPO}`, name: REPO, owner: { login: OWNER } },
        sender: { login: fork ? 'mallory' : 'dev' },
      },
    };
  }

  /**
   * Runs the README's stategate step, with `extra` inputs, in a fresh shallow checkout of `branch`
   * (or in `workspace`), with `env` added to the step's; fails the test on any request GitHub's description does not allow.
   */
  async step(
    branch: string,
    event: StepOptions['event'],
    extra: Record<string, string | number> = {},
    workspace?: string,
    env: Record<string, string> = {},
  ): Promise<StepRun> {
    const ws = workspace ?? checkout(this.repo, branch, join(this.root, `ws-${++this.workspaces}`));
    const step = readmeStep();
    const result = await runStep({
      workspace: ws,
      with: { ...step.with, ...extra },
      env: { ...step.env, ...this.env, ...env },
      event,
      repository: `${OWNER}/${REPO}`,
      sha: this.repo.branches[branch]?.sha ?? this.repo.base.sha,
      apiUrl: this.api.url,
      token: TOKEN,
      runnerTemp: join(this.root, 'runner'),
      dist: this.dist,
      as: this.as,
    });
    expect(this.api.violations).toEqual([]);
    return { ...result, workspace: ws };
  }

  comments(number: number) {
    return this.api.comments.filter((c) => c.issue_number === number);
  }

  checkRunsOn(branch: string) {
    return this.api.checkRuns.filter((c) => c.head_sha === this.repo.branches[branch].sha);
  }
}

export const errors = (r: StepResult) => r.commands.filter((c) => c.command === 'error');
export const warnings = (r: StepResult) => r.commands.filter((c) => c.command === 'warning');

/** The 1-based line of `id: <id>` (as a list item or a key) in a file; 0 when absent. */
export function lineOf(file: string, id: string): number {
  const lines = readFileSync(file, 'utf8').split('\n');
  return lines.findIndex((l) => new RegExp(`^\\s*(?:- )?id: ${id}\\s*$`).test(l)) + 1;
}
