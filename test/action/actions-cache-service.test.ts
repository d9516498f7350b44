// The baseline cache's restore and save through the real @actions/cache client against the loopback
// cache service: what one job saves, a job with a fresh runner folder restores byte for byte; a
// client call the service does not expect is refused and fails here.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cachePlan, restoreBaseline, saveBaseline } from '../../src/action/baseline-cache.js';
import { type ActionsCacheService, startActionsCache } from '../helpers/actions-cache.js';

let svc: ActionsCacheService;
const saved: Record<string, string | undefined> = {};
const runnerTemp = mkdtempSync(join(tmpdir(), 'sg-cache-job-'));
const roots: string[] = [runnerTemp];

beforeAll(async () => {
  svc = await startActionsCache();
  for (const [k, v] of Object.entries({
    ...svc.env,
    GITHUB_SERVER_URL: 'https://github.com',
    RUNNER_TEMP: runnerTemp,
  })) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await svc?.close();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});
afterEach(() => {
  expect(svc.refusals).toEqual([]);
});

/**
 * A job's RUNNER_TEMP as GitHub's runners give it: the same place every job, emptied. (The cache
 * version @actions/cache computes hashes the absolute path, so the place must not move.)
 */
function freshRunnerTemp(): string {
  rmSync(runnerTemp, { recursive: true, force: true });
  mkdirSync(runnerTemp);
  return runnerTemp;
}

const plan = (runnerTemp: string, runId: string) =>
  cachePlan({ runnerTemp, version: '9.9.9', baseTree: 'a'.repeat(40), shard: null, runId, runAttempt: '1' });

function sayInto(lines: string[]) {
  return {
    info: (m: string) => lines.push(`info: ${m}`),
    warning: (m: string) => lines.push(`warning: ${m}`),
  };
}

describe('the baseline cache through @actions/cache and the loopback service', () => {
  it('restores in a fresh runner folder exactly the entry a previous job saved', async () => {
    const said: string[] = [];
    const first = plan(freshRunnerTemp(), '100');
    await restoreBaseline(first, sayInto(said));
    expect(said).toEqual([`info: cache: nothing saved yet under ${first.restoreKeys[0]}`]);
    const text = JSON.stringify({ format: 'stategate-baseline-cache', episodes: [1, 2, 3] });
    const file = join(first.dir, `base-${'b'.repeat(64)}.json`);
    writeFileSync(file, text);
    writeFileSync(join(first.dir, 'planted.json'), 'left by someone else');
    await saveBaseline(
      first,
      { file, sha256: createHash('sha256').update(text).digest('hex') },
      sayInto(said),
    );
    expect(said.at(-1)).toBe(`info: cache: saved the base's episodes as ${first.key}`);
    expect(svc.entries.map((e) => [e.key, e.archive !== null])).toEqual([[first.key, true]]);

    const second = plan(freshRunnerTemp(), '101');
    const said2: string[] = [];
    await restoreBaseline(second, sayInto(said2));
    expect(said2).toEqual([`info: cache: restored ${first.key}`]);
    expect(readdirSync(second.dir)).toEqual([`base-${'b'.repeat(64)}.json`]);
    expect(readFileSync(join(second.dir, `base-${'b'.repeat(64)}.json`), 'utf8')).toBe(text);
  });

  it('restores nothing saved under another base tree', async () => {
    const other = cachePlan({
      runnerTemp: freshRunnerTemp(),
      version: '9.9.9',
      baseTree: 'c'.repeat(40),
      shard: null,
      runId: '102',
      runAttempt: '1',
    });
    const said: string[] = [];
    await restoreBaseline(other, sayInto(said));
    expect(said).toEqual([`info: cache: nothing saved yet under ${other.restoreKeys[0]}`]);
    expect(readdirSync(other.dir)).toEqual([]);
  });

  it('does not claim a save the service refused', async () => {
    // The key of the first test's run again: entries are immutable, so the service refuses it.
    const again = plan(freshRunnerTemp(), '100');
    const text = '{"format":"stategate-baseline-cache"}';
    const file = join(again.dir, `base-${'d'.repeat(64)}.json`);
    mkdirSync(again.dir, { recursive: true });
    writeFileSync(file, text);
    const said: string[] = [];
    await saveBaseline(
      again,
      { file, sha256: createHash('sha256').update(text).digest('hex') },
      sayInto(said),
    );
    expect(said).toEqual([`warning: cache: ${again.key} was not saved; the next run runs the base again`]);
    expect(svc.entries.filter((e) => e.key === again.key)).toHaveLength(1);
  });
  it('says when the step has no cache service, and the base runs in full', async () => {
    const url = process.env.ACTIONS_RESULTS_URL;
    delete process.env.ACTIONS_RESULTS_URL;
    const before = svc.requests.length;
    try {
      const p = plan(freshRunnerTemp(), '103');
      const said: string[] = [];
      await restoreBaseline(p, sayInto(said));
      expect(said).toEqual([
        `info: cache: the Actions cache service is not available to this step; the base's episodes are kept in ${p.dir} for this job only`,
      ]);
      expect(svc.requests.length).toBe(before);
    } finally {
      process.env.ACTIONS_RESULTS_URL = url;
    }
  });
});
