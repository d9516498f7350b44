// The baseline cache through the action as the runner runs it: a second push to the same pull
// request reuses the base's episodes and says so in the comment; a fork's run neither reads nor
// writes them; what is saved is only the entry the run wrote. The Actions cache service itself is
// not reachable here (the action says so), so the runner folder the cache restores into is kept
// between the steps: the same folder actions/cache would restore.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/types.js';
import { agentVersion } from './demo-repo.js';
import { Harness } from './harness.js';

let h: Harness;
const runnerTemp = mkdtempSync(join(tmpdir(), 'sg-action-cache-'));
const cacheDir = join(runnerTemp, 'stategate-baseline-cache');
const env = { RUNNER_TEMP: runnerTemp };

beforeAll(async () => {
  h = await Harness.start([agentVersion('1.2.4')], { 'lean-prompt': [agentVersion('1.3.0')] });
});
afterAll(async () => {
  await h?.close();
  rmSync(runnerTemp, { recursive: true, force: true });
});

const reportOf = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Report;

describe('the action with cache: true (the default)', () => {
  let first: Report;

  it('stores the base on the first push, and only the entry it wrote', { timeout: 600_000 }, async () => {
    // Left in the folder by anything before the run (an agent, a stale restore): never saved.
    mkdirSync(cacheDir, { recursive: true });
    const planted = join(cacheDir, `base-${'0'.repeat(64)}.json`);
    writeFileSync(planted, '{"format":"stategate-baseline-cache"}');
    const r = await h.step(
      'lean-prompt',
      h.pullRequestEvent(7, 'lean-prompt'),
      { repeats: 1 },
      undefined,
      env,
    );
    expect(r.outputs.verdict, r.stdout + r.stderr).toBe('BLOCK');
    expect(r.stdout).toContain('cache: the Actions cache service is not available to this step');
    first = reportOf(r.outputs['report-path']);
    expect(first.baseline_cache).toMatchObject({ hit: false, reused_episodes: 0, saved: true });
    expect(readdirSync(cacheDir)).toEqual([`base-${first.baseline_cache!.key}.json`]);
    expect(existsSync(planted)).toBe(false);
  });

  it('reuses every base episode on the next push and says so in the comment and the check', {
    timeout: 600_000,
  }, async () => {
    const r = await h.step(
      'lean-prompt',
      h.pullRequestEvent(7, 'lean-prompt'),
      { repeats: 1 },
      undefined,
      env,
    );
    const report = reportOf(r.outputs['report-path']);
    expect(report.baseline_cache).toEqual({
      key: first.baseline_cache!.key,
      hit: true,
      reused_episodes: 4,
      stored_at: first.started_at,
      saved: false,
    });
    expect(report.verdict).toBe(first.verdict);
    expect(Object.fromEntries(report.cases.map((c) => [c.id, c.class]))).toEqual(
      Object.fromEntries(first.cases.map((c) => [c.id, c.class])),
    );
    const line = `base: 4 episodes reused from the run of ${first.started_at!.slice(0, 16).replace('T', ' ')} UTC (cache key ${first.baseline_cache!.key.slice(0, 12)})`;
    const [comment] = h.comments(7);
    expect(comment.body).toContain(line);
    expect(h.checkRunsOn('lean-prompt').at(-1)!.output.summary).toContain(line);
  });

  it("neither reads nor writes the cache on a fork's pull_request run", { timeout: 600_000 }, async () => {
    const file = join(cacheDir, readdirSync(cacheDir)[0]);
    const before = { text: readFileSync(file, 'utf8'), mtime: statSync(file).mtimeMs };
    const r = await h.step(
      'lean-prompt',
      h.pullRequestEvent(8, 'lean-prompt', true),
      { repeats: 1 },
      undefined,
      env,
    );
    expect(r.stdout).toContain(
      'cache: not used: the pull request comes from the fork mallory/refunds, whose workflow runs this step',
    );
    const report = reportOf(r.outputs['report-path']);
    expect(report.baseline_cache).toBeUndefined();
    expect(readdirSync(cacheDir)).toEqual([file.slice(cacheDir.length + 1)]);
    expect({ text: readFileSync(file, 'utf8'), mtime: statSync(file).mtimeMs }).toEqual(before);
  });
});
