// The baseline cache through the action as the runner runs it, with @actions/cache talking to a
// loopback Actions cache service: a second push to the same pull request, in a new job whose
// RUNNER_TEMP starts empty, restores the base's episodes and says so in the comment; a fork's run
// neither reads nor writes them (its pull_request_target run reads but never writes); what is saved
// is only the entry the run wrote.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/model/report.js';
import { type ActionsCacheService, startActionsCache } from '../helpers/actions-cache.js';
import { agentSharedDir } from '../helpers/agent-dir.js';
import { agentVersion, type Change } from './demo-repo.js';
import { Harness } from './harness.js';

let h: Harness;
let svc: ActionsCacheService;
const runnerTemp = mkdtempSync(join(tmpdir(), 'sg-action-cache-'));
const cacheDir = join(runnerTemp, 'stategate-baseline-cache');

/**
 * The environment of a new job: RUNNER_TEMP at the same place, emptied (as on GitHub's runners),
 * its own run id, and the cache service every job gets.
 */
function newJob(runId: string): Record<string, string> {
  rmSync(runnerTemp, { recursive: true, force: true });
  mkdirSync(runnerTemp);
  return { ...svc.env, RUNNER_TEMP: runnerTemp, GITHUB_RUN_ID: runId, GITHUB_RUN_ATTEMPT: '1' };
}

/** The file names in a saved entry's archive (tar with zstd, or gzip where zstd is missing: tar reads either). */
function archiveNames(archive: Buffer): string[] {
  const file = join(runnerTemp, 'entry.tar');
  writeFileSync(file, archive);
  const out = execFileSync('tar', ['-tf', file], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  rmSync(file);
  return out
    .split('\n')
    .filter((l) => l && !l.endsWith('/'))
    .map((l) => l.slice(l.lastIndexOf('/') + 1));
}

/**
 * Agent starts by manifest version ('1.2.4' the base, '1.3.0' the head), told by the agent itself in
 * a file of a folder shared with its sandbox (agents reach no server of the machine).
 */
const startsDir = agentSharedDir('sg-action-cache-starts-');
const startsFile = join(startsDir, 'starts');
const starts = {
  get length() {
    return readStarts().length;
  },
};
function readStarts(): string[] {
  return existsSync(startsFile) ? readFileSync(startsFile, 'utf8').split('\n').filter(Boolean) : [];
}

/** The demo agent, on every branch, first reports its version to the file. */
const countingStarts =
  (file: string): Change =>
  (dir) => {
    const agent = join(dir, 'examples/refund-agent/agent.mjs');
    const text = readFileSync(agent, 'utf8');
    const count = `const { version } = JSON.parse(await (await import('node:fs/promises')).readFile(new URL('./manifest.json', import.meta.url), 'utf8'));\n(await import('node:fs')).appendFileSync(${JSON.stringify(file)}, version + '\\n');\n`;
    writeFileSync(agent, text.replace('\ntry {', `\n${count}try {`));
  };

const startsOf = (version: string, from: number) =>
  readStarts()
    .slice(from)
    .filter((v) => v === version).length;

beforeAll(async () => {
  svc = await startActionsCache();
  h = await Harness.start([countingStarts(startsFile), agentVersion('1.2.4')], {
    'lean-prompt': [agentVersion('1.3.0')],
  });
});
afterAll(async () => {
  await h?.close();
  await svc?.close();
  rmSync(startsDir, { recursive: true, force: true });
  rmSync(runnerTemp, { recursive: true, force: true });
});

const reportOf = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Report;

describe('the action with cache: true (the default)', () => {
  let first: Report;
  let savedKey: string;

  it('saves the base on the first push, and only the entry it wrote', { timeout: 600_000 }, async () => {
    const env = newJob('5001');
    const from = starts.length;
    // Left in the folder by anything before the save (an agent, a stale restore): never saved.
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
    expect(svc.refusals).toEqual([]);
    first = reportOf(r.outputs['report-path']);
    expect(first.baseline_cache).toMatchObject({ hit: false, reused_episodes: 0, saved: true });
    expect(readdirSync(cacheDir)).toEqual([`base-${first.baseline_cache!.key}.json`]);
    expect(existsSync(planted)).toBe(false);
    // The service holds one finalized entry under a trusted key, and its archive holds that file only.
    expect(svc.entries).toHaveLength(1);
    const [entry] = svc.entries;
    expect(entry.key).toMatch(/^stategate-baseline-trusted-.+-5001-1$/);
    expect(entry.archive).not.toBeNull();
    expect(archiveNames(entry.archive!)).toEqual([`base-${first.baseline_cache!.key}.json`]);
    expect(r.stdout).toContain(`cache: saved the base's episodes as ${entry.key}`);
    savedKey = entry.key;
    // The agents' own file says: four base episodes and four head episodes ran.
    expect([startsOf('1.2.4', from), startsOf('1.3.0', from)]).toEqual([4, 4]);
  });

  it('restores them in a new job on the next push, reuses every base episode and says so', {
    timeout: 600_000,
  }, async () => {
    const env = newJob('5002');
    const before = svc.requests.length;
    const from = starts.length;
    const r = await h.step(
      'lean-prompt',
      h.pullRequestEvent(7, 'lean-prompt'),
      { repeats: 1 },
      undefined,
      env,
    );
    expect(svc.refusals).toEqual([]);
    expect(r.stdout, r.stdout + r.stderr).toContain(`cache: restored ${savedKey}`);
    // Restored through the service: the lookup, then the download of the saved archive.
    expect(svc.requests.slice(before).map((q) => [q.call, q.status])).toEqual([
      ['GetCacheEntryDownloadURL', 200],
      ['blob:get', 200],
    ]);
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
    expect(svc.entries).toHaveLength(1);
    // The base agent was started zero times; the head's ran as before.
    expect([startsOf('1.2.4', from), startsOf('1.3.0', from)]).toEqual([0, 4]);
  });

  it("neither reads nor writes the cache on a fork's pull_request run", { timeout: 600_000 }, async () => {
    const env = newJob('5003');
    const before = svc.requests.length;
    const from = starts.length;
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
    // The service heard nothing from the fork's run, and still holds only the first push's entry.
    expect(svc.requests.slice(before)).toEqual([]);
    expect(svc.entries.map((e) => e.key)).toEqual([savedKey]);
    expect(existsSync(cacheDir) ? readdirSync(cacheDir) : []).toEqual([]);
    expect(startsOf('1.2.4', from)).toBe(4);
  });

  it("reads but never writes the cache on a fork's pull_request_target run", {
    timeout: 600_000,
  }, async () => {
    const env = newJob('5004');
    // Another repeats count: a miss, so the base runs and the run stores what it ran.
    const r = await h.step(
      'lean-prompt',
      { ...h.pullRequestEvent(9, 'lean-prompt', true), name: 'pull_request_target' },
      { repeats: 2 },
      undefined,
      env,
    );
    expect(svc.refusals).toEqual([]);
    expect(r.stdout, r.stdout + r.stderr).toContain(`cache: restored ${savedKey}`);
    expect(r.stdout).toContain(
      "cache: the base's episodes were not saved: the pull request comes from the fork mallory/refunds, whose agent ran in this job",
    );
    // The fork's agent ran beside these base episodes: nothing of them reaches the base branch's scope.
    expect(svc.entries.map((e) => e.key)).toEqual([savedKey]);
  });
});
