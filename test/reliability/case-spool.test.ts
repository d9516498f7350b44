// episodes.jsonl and the per-case spool the report is built from: every graded episode comes back under its case and
// side, whole, however many arrive at once; the spool leaves nothing behind.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { GradedEpisode, Side } from '../../src/model/episode.js';
import { CaseSpool, EpisodeLog } from '../../src/run/episode-log.js';

const root = mkdtempSync(join(tmpdir(), 'sg-spool-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function graded(scenario: string, side: Side, repeat: number): GradedEpisode {
  return {
    record: {
      episode: `${scenario}-${side}-${repeat}`,
      scenario,
      side,
      repeat,
      seed: repeat,
      calls: [],
      refused: [],
      agent: {
        exitCode: 0,
        signal: null,
        timedOut: false,
        durationMs: 1,
        stdout: 'x'.repeat(70_000),
        stderr: '',
        truncated: false,
      },
      diff: { tables: {}, fingerprints: {} },
      queries: {},
      timings: {},
    },
    results: [],
    passed: repeat % 2 === 0,
  };
}

describe('CaseSpool', () => {
  it('gives back each case’s episodes by side, whole, after concurrent writes', async () => {
    const dir = join(root, 'a');
    // Ids a file name could not hold are fine: files are named by position.
    const ids = ['refund/one', 'two: "quoted"'];
    const spool = new CaseSpool(dir, ids);
    const all = ids.flatMap((id) =>
      (['base', 'head'] as Side[]).flatMap((side) =>
        Array.from({ length: 20 }, (_, r) => graded(id, side, r)),
      ),
    );
    // Large lines written all at once to the same files must not interleave.
    await Promise.all(all.map((g) => spool.write(g)));
    for (const id of ids) {
      const sides = spool.read(id);
      for (const side of ['base', 'head'] as Side[]) {
        expect(sides[side].map((g) => g.record.repeat).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 20 }, (_, r) => r),
        );
        expect(
          sides[side].every((g) => g.record.scenario === id && g.record.agent.stdout.length === 70_000),
        ).toBe(true);
      }
    }
    expect(readdirSync(dir).sort()).toEqual(['0.jsonl', '1.jsonl']);
    await spool.dispose();
    expect(existsSync(dir)).toBe(false);
  });

  it('reads a case none of whose episodes ran as empty, and refuses a case not in the run', async () => {
    const spool = new CaseSpool(join(root, 'b'), ['never-ran']);
    expect(spool.read('never-ran')).toEqual({ base: [], head: [] });
    expect(() => spool.read('other')).toThrow("case spool: no case 'other' in this run");
    await expect(spool.write(graded('other', 'head', 0))).rejects.toThrow("no case 'other'");
    await spool.dispose();
  });
});

describe('EpisodeLog', () => {
  it('keeps every line and warns of nothing when many episodes finish while the file is behind', async () => {
    const path = join(root, 'episodes.jsonl');
    const log = new EpisodeLog(path);
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      // 64 lines of 70 KB each overflow the stream's buffer at once: every writer waits for it.
      const all = Array.from({ length: 64 }, (_, r) => graded(`case-${r}`, 'head', r));
      await Promise.all(all.map((g) => log.write(g)));
      await log.close();
      // A warning is emitted on the next tick.
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((w) => w.message)).toEqual([]);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as GradedEpisode).record.repeat).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 64 }, (_, r) => r),
    );
  });
});
