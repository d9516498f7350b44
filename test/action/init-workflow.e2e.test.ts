// The workflow `stategate init` writes, run as the runner runs it: its stategate step (dist/index.js
// with that step's inputs) on a pull request that drops the scaffold agent's idempotency key, in a
// repository made by init alone. The check is a failure and the step fails: a newcomer's own
// regression, blocked by the files init gave them.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { type GitHubApi, startGitHubApi } from '../helpers/github-api.js';
import { stategate } from '../helpers/stategate-cli.js';
import { git } from './demo-repo.js';
import { runStep } from './runner.js';

const OWNER = 'acme';
const REPO = 'shop';
let root: string;
let repo: string;
let api: GitHubApi;
let baseSha: string;
let headSha: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'sg-init-action-'));
  repo = join(root, 'repo');
  mkdirSync(repo);
  const init = stategate(repo, ['init', '--lang', 'python']);
  if (init.code !== 0) throw new Error(init.stderr);
  git(repo, 'init', '-q');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'Stategate suite');
  baseSha = git(repo, 'rev-parse', 'HEAD');
  git(repo, 'checkout', '-q', '-b', 'no-key');
  const agent = join(repo, 'agent', 'agent.py');
  writeFileSync(agent, readFileSync(agent, 'utf8').replace(', "idempotency_key": key}', '}'));
  git(repo, 'commit', '-qam', 'A leaner refund call');
  headSha = git(repo, 'rev-parse', 'HEAD');
  api = await startGitHubApi({
    owner: OWNER,
    repo: REPO,
    pullRequests: [{ number: 3, headSha, headOwner: OWNER, headBranch: 'no-key' }],
  });
}, 120_000);
afterAll(async () => {
  await api?.close();
  rmSync(root, { recursive: true, force: true });
});

interface Step {
  uses?: string;
  with?: Record<string, string | number>;
}

describe('the workflow stategate init writes', () => {
  it('blocks the pull request that regresses the scaffold agent', { timeout: 300_000 }, async () => {
    const workflow = parse(readFileSync(join(repo, '.github/workflows/stategate.yml'), 'utf8'));
    const step = (workflow.jobs.gate.steps as Step[]).find((s) => /\/stategate@v\d+$/.test(s.uses ?? ''));
    expect(step).toBeDefined();
    const result = await runStep({
      workspace: repo,
      // The workflow's own inputs; the test server instead of the runner's Docker, and two repeats.
      with: { ...step!.with, engine: 'postgres', repeats: 2 },
      env: { STATEGATE_DATABASE_URL: TEST_DATABASE_URL },
      event: {
        name: 'pull_request',
        payload: {
          action: 'synchronize',
          number: 3,
          pull_request: {
            number: 3,
            state: 'open',
            title: 'A leaner refund call',
            head: { ref: 'no-key', sha: headSha, repo: { full_name: `${OWNER}/${REPO}`, fork: false } },
            base: { ref: 'main', sha: baseSha, repo: { full_name: `${OWNER}/${REPO}`, fork: false } },
          },
          repository: { full_name: `${OWNER}/${REPO}`, name: REPO, owner: { login: OWNER } },
          sender: { login: 'dev' },
        },
      },
      repository: `${OWNER}/${REPO}`,
      sha: headSha,
      apiUrl: api.url,
      token: `ghs_${'T0k3n'.repeat(7)}x`,
      runnerTemp: join(root, 'runner'),
    });
    expect(api.violations).toEqual([]);
    expect(result.outputs.verdict, result.stdout + result.stderr).toBe('BLOCK');
    expect(result.outputs['new-critical-failure']).toBe('1');
    expect(result.code).toBe(1);
    const runs = api.checkRuns.filter((c) => c.head_sha === headSha && c.status === 'completed');
    expect(runs.map((c) => c.conclusion)).toEqual(['failure']);
    expect(result.summary).toContain('refund-timeout-after-mutation');
  });
});
