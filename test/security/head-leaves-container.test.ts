// A head whose stategate.yml says `agent.isolation: process` while its base says `container`:
// the head's agent still runs in a container, so a pull request cannot let itself out.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCompare } from '../../src/run/pipeline.js';
import { git } from '../helpers/demo-repo.js';
import { AGENT_IMAGE, RUN_CONTAINER_TESTS, requireDocker } from '../helpers/docker.js';
import { kvSuite, readEpisodes, replyOf, TEST_DATABASE_URL } from '../reliability/kv-suite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.runIf(RUN_CONTAINER_TESTS)('a head that asks for process isolation', () => {
  it('runs in a container when its base does', { timeout: 300_000 }, async () => {
    requireDocker();
    const repo = kvSuite({
      scenarios: ['where'],
      agent:
        "import { existsSync } from 'node:fs';\ndone({ uid: process.getuid(), runner: existsSync('/stategate/side/runner.js') });",
      expect: '  - id: untouched\n    query: SELECT count(*) FROM kv\n    equals: 1\n',
    });
    dirs.push(repo);
    const config = readFileSync(join(repo, 'stategate.yml'), 'utf8');
    const withIsolation = (mode: string) =>
      config.replace('  timeout:', `  isolation: ${mode}\n  image: ${AGENT_IMAGE}\n  timeout:`);
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'config', 'user.email', 'ci@example.com');
    git(repo, 'config', 'user.name', 'ci');
    writeFileSync(join(repo, 'stategate.yml'), withIsolation('container'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'base: agents in containers');
    git(repo, 'tag', 'base');
    writeFileSync(join(repo, 'stategate.yml'), withIsolation('process'));
    git(repo, 'commit', '-qam', 'head: let me out');

    const out = join(repo, 'out');
    await runCompare({
      base: 'base',
      head: 'HEAD',
      repo,
      out,
      engine: 'postgres',
      databaseUrl: TEST_DATABASE_URL,
    });
    const bySide = Object.fromEntries(readEpisodes(out).map((g) => [g.record.side, replyOf(g)]));
    expect(bySide.base).toEqual({ uid: 10001, runner: true });
    expect(bySide.head).toEqual({ uid: 10001, runner: true });
  });
});
