// The demo's refund agent, v1.2.4 against v1.3.0, as processes and in containers: every case is
// classified the same, so container isolation changes where the agent runs, not its grade.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/pipeline.js';
import { git, writeDemoFiles } from '../helpers/demo-repo.js';
import {
  AGENT_IMAGE,
  agentContainersSince,
  RUN_CONTAINER_TESTS,
  requireAgentImage,
  requireDocker,
} from '../helpers/docker.js';
import { TEST_DATABASE_URL } from '../reliability/kv-suite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.runIf(RUN_CONTAINER_TESTS)('the demo under both isolation modes', () => {
  it('classifies every case the same', { timeout: 600_000 }, async () => {
    requireDocker();
    await requireAgentImage();
    const repo = mkdtempSync(join(tmpdir(), 'sg-demo-container-'));
    dirs.push(repo);
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'config', 'user.email', 'ci@example.com');
    git(repo, 'config', 'user.name', 'ci');
    for (const v of ['v1.2.4', 'v1.3.0']) {
      writeDemoFiles(repo, v);
      const config = readFileSync(join(repo, 'stategate.yml'), 'utf8');
      writeFileSync(
        join(repo, 'stategate.yml'),
        config.replace('  timeout: 30s\n', `  timeout: 30s\n  image: ${AGENT_IMAGE}\n`),
      );
      git(repo, 'add', '-A');
      git(repo, 'commit', '-qm', v);
      git(repo, 'tag', v);
    }
    const classes = async (isolation: 'process' | 'container') => {
      const { report } = await runCompare({
        base: 'v1.2.4',
        head: 'v1.3.0',
        repo,
        out: join(repo, `out-${isolation}`),
        repeats: 1,
        engine: 'postgres',
        databaseUrl: TEST_DATABASE_URL,
        isolation,
      });
      return { verdict: report.verdict, cases: Object.fromEntries(report.cases.map((c) => [c.id, c.class])) };
    };
    const inProcess = await classes('process');
    const inContainer = await classes('container');
    expect(inProcess.verdict).toBe('BLOCK');
    expect(inContainer).toEqual(inProcess);
    expect(await agentContainersSince([])).toEqual([]);
  });
});
