// Attack: the label says one thing and another runs. `--head HEAD` on a repository with uncommitted
// changes runs the commit while the author thinks the edits were tested; `--head .` runs the edits
// under the bare commit's name; base and head of the same tree "pass" a change that was never
// compared. Each side is labelled with what ran, and the same files on both sides are reported.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { GradedEpisode } from '../../src/model/episode.js';
import { renderTerminal } from '../../src/report/terminal.js';
import type { ProgressEvent } from '../../src/run/api.js';
import { runCompare } from '../../src/run/pipeline.js';
import { commitTagged, initRepo } from '../helpers/demo-repo.js';
import { CALL_TOOL, putTwin, stategate, writeSuite } from './suite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const TWIN = putTwin();

/** An agent that stores and replies with the version in its checkout's VERSION file. */
const AGENT = `${CALL_TOOL}
import { readFileSync } from 'node:fs';
const version = readFileSync('VERSION', 'utf8').trim();
await call('put', { k: 'version', v: version });
done(version);
`;

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** A repository whose one commit is version v1, tagged v1; nothing ignores the run's output. */
function repo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-dirty-'));
  dirs.push(dir);
  const inDir = (...args: string[]) => git(dir, ...args);
  initRepo(inDir);
  writeSuite(
    {
      twin: TWIN,
      agentFiles: { 'agent.mjs': AGENT, VERSION: 'v1\n' },
      agent: '  command: node agent.mjs\n  timeout: 60s',
      expect: "  - id: stored\n    query: SELECT count(*) FROM kv WHERE k = 'version'\n    equals: 1\n",
    },
    dir,
  );
  commitTagged(inDir, 'v1');
  return dir;
}

function replies(out: string): Record<string, string[]> {
  const by: Record<string, string[]> = {};
  for (const line of readFileSync(join(out, 'episodes.jsonl'), 'utf8').split('\n').filter(Boolean)) {
    const g = JSON.parse(line) as GradedEpisode;
    by[g.record.side] = [...(by[g.record.side] ?? []), JSON.parse(g.record.agent.result?.reply ?? 'null')];
  }
  return by;
}

describe('a working tree with uncommitted changes', () => {
  it('run as `--head .` is labelled "with uncommitted changes" in report.json, report.md and the terminal', {
    timeout: 300_000,
  }, async () => {
    const dir = repo();
    const sha = git(dir, 'rev-parse', 'HEAD');
    writeFileSync(join(dir, 'VERSION'), 'v2-uncommitted\n');
    const res = await stategate(dir, ['compare', '--base', 'v1', '--head', '.', '--engine', 'embedded']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`head . @ ${sha.slice(0, 7)} with uncommitted changes`);
    expect(res.stderr).toContain('head: . @ ');
    const out = join(dir, '.stategate');
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    expect(report.sides.head).toEqual({ ref: '.', sha, dirty: true });
    expect(report.sides.base).toEqual({ ref: 'v1', sha });
    expect(report.identical_sides).toBeUndefined();
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain('with uncommitted changes');
    // What ran is the working tree, not the commit the label names.
    expect(replies(out)).toEqual({ base: ['v1'], head: ['v2-uncommitted'] });
  });

  it('run as `--head HEAD` warns that the commit runs, not the working tree', {
    timeout: 300_000,
  }, async () => {
    const dir = repo();
    writeFileSync(join(dir, 'VERSION'), 'v2-uncommitted\n');
    const warnings: string[] = [];
    const onProgress = (e: ProgressEvent) => {
      if (e.type === 'log' && e.level === 'warn') warnings.push(e.message);
    };
    const out = join(dir, 'out');
    const { report } = await runCompare({
      base: null,
      head: 'HEAD',
      repo: dir,
      out,
      engine: 'embedded',
      onProgress,
    });
    expect(warnings.join('\n')).toMatch(
      /head: 'HEAD' is the commit [0-9a-f]{7}: the committed tree runs, not the working tree/,
    );
    expect(report.sides.head?.dirty).toBeUndefined();
    expect(replies(out)).toEqual({ head: ['v1'] });
  });
});

describe('base and head of the same files', () => {
  it('are reported as such, by tree (a ref and a clean directory) or by directory', {
    timeout: 300_000,
  }, async () => {
    const dir = repo();
    // The run's own output (here inside the repository, not ignored) is no change of the tree.
    const out = join(dir, 'out');
    const byTree = await runCompare({ base: 'v1', head: '.', repo: dir, out, engine: 'embedded' });
    expect(byTree.report.sides.head?.dirty).toBeUndefined();
    expect(byTree.report.identical_sides).toBe(true);
    expect(byTree.markdown).toContain('Base and head are the same files');
    expect(renderTerminal(byTree.report)).toContain('Base and head are the same files');

    const byDir = await runCompare({ base: '.', head: '.', repo: dir, out, engine: 'embedded' });
    expect(byDir.report.identical_sides).toBe(true);

    // One changed file and they are not the same any more.
    writeFileSync(join(dir, 'VERSION'), 'v2\n');
    const changed = await runCompare({ base: 'v1', head: '.', repo: dir, out, engine: 'embedded' });
    expect(changed.report.identical_sides).toBeUndefined();
    expect(changed.report.sides.head?.dirty).toBe(true);
    expect(changed.markdown).not.toContain('Base and head are the same files');
  });
});
