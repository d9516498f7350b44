// The bundled action, copied without node_modules as a runner fetches it, runs the demo on the
// testcontainers engine: the container client it loads lazily is in the bundle and works minified.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot, writeDemoVersion } from '../../src/cli/demo.js';
import { RUN_CONTAINER_TESTS, requireDocker, TEST_DOCKER_HOST } from '../helpers/docker.js';
import { actionCopy, runStep } from './runner.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.runIf(RUN_CONTAINER_TESTS)('the action bundle on Docker', () => {
  it('runs the demo on the testcontainers engine from a copy with no node_modules', {
    timeout: 600_000,
  }, async () => {
    requireDocker();
    const root = mkdtempSync(join(tmpdir(), 'stategate-bundle-docker-'));
    dirs.push(root);
    const ws = join(root, 'workspace');
    mkdirSync(ws);
    writeDemoVersion(projectRoot(), 'v1.3.1', ws);
    const step = await runStep({
      dist: actionCopy(join(root, 'action')),
      workspace: ws,
      with: { engine: 'testcontainers', repeats: 1 },
      // No reaper image can be pulled here; stategate removes its own containers.
      env: { DOCKER_HOST: TEST_DOCKER_HOST ?? '', TESTCONTAINERS_RYUK_DISABLED: 'true' },
      event: { name: 'push', payload: {} },
      repository: 'acme/refunds',
      sha: 'c'.repeat(40),
      apiUrl: 'http://127.0.0.1:9',
      token: '',
      runnerTemp: join(root, 'runner-temp'),
    });
    expect(step.code, step.stdout + step.stderr).toBe(0);
    const report = JSON.parse(readFileSync(step.outputs['report-path'], 'utf8'));
    expect(report.engine).toBe('testcontainers');
    expect(report.verdict).toBe('PASS');
    expect(step.outputs.incomplete).toBe('0');
  });
});
