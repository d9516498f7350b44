// Attack: the action's head is the workspace itself, and the run's out directory lies inside it
// (`.stategate`). With agent.isolation: container the checkout is bound into every container, the
// out directory with it: agent.setup (whose checkout is writable) could plant a symlink where the
// harness then writes (the agent server's log, which takes the agent's own output, appended to any
// file of the harness's user), and every episode could read the spool of graded episodes. The out
// directory is covered in every container: empty and closed.
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commitTagged, git, initRepo } from '../helpers/demo-repo.js';
import { AGENT_IMAGE, RUN_CONTAINER_TESTS, requireDocker } from '../helpers/docker.js';
import { kvSuite, readEpisodes, replyOf } from '../reliability/kv-suite.js';
import { compareOnTestServer } from './suite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.runIf(RUN_CONTAINER_TESTS)('a container agent and the out directory in its checkout', () => {
  it('can neither write it in agent.setup nor read it in an episode', { timeout: 300_000 }, async () => {
    requireDocker();
    const repo = kvSuite({
      scenarios: ['where'],
      agent: [
        "import { readdirSync } from 'node:fs';",
        'let seen;',
        "try { seen = readdirSync('/workspace/out'); } catch (e) { seen = e.code; }",
        'done({ seen });',
      ].join('\n'),
      expect: '  - id: untouched\n    query: SELECT count(*) FROM kv\n    equals: 1\n',
    });
    dirs.push(repo);
    // The agent runs as 10001 in its container: a root-owned checkout must be open to others.
    chmodSync(repo, 0o755);
    const config = readFileSync(join(repo, 'stategate.yml'), 'utf8').replace(
      '  timeout:',
      `  isolation: container\n  image: ${AGENT_IMAGE}\n  setup: "echo planted > out/planted-by-setup || true"\n  timeout:`,
    );
    writeFileSync(join(repo, 'stategate.yml'), config);
    const inRepo = (...args: string[]) => git(repo, ...args);
    initRepo(inRepo);
    writeFileSync(join(repo, '.gitignore'), 'out/\n');
    commitTagged(inRepo, 'base');

    const out = join(repo, 'out');
    // The head in place, as the action runs it: the out directory is inside its checkout.
    await compareOnTestServer(repo, 'base', out);
    expect(existsSync(join(out, 'planted-by-setup'))).toBe(false);
    const head = readEpisodes(out).find((g) => g.record.side === 'head');
    const seen = (replyOf(head!) as { seen: unknown }).seen;
    expect(Array.isArray(seen) ? seen : []).toEqual([]);
    expect(readdirSync(out)).not.toContain('planted-by-setup');
  });
});
