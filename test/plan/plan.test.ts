import { describe, expect, it } from 'vitest';
import { parseShard } from '../../src/config/options.js';
import type { Scenario } from '../../src/config/schema.js';
import { canonicalJson } from '../../src/model/canonical-json.js';
import { expandEpisodes, shardOf, sliceScenarios } from '../../src/plan/expand.js';
import { seedFor } from '../../src/plan/pin.js';

const scenario = (id: string): Scenario => ({
  id,
  description: '',
  tags: [],
  state: { rows: {} },
  input: { message: 'hi', context: {} },
  faults: [],
  expect: [],
  file: `scenarios/${id}.yaml`,
});

describe('expandEpisodes', () => {
  it('gives both sides of a pair the same seed and interleaves them', () => {
    const eps = expandEpisodes([scenario('a'), scenario('b')], ['base', 'head'], 3, 'hash');
    expect(eps).toHaveLength(12);
    for (const id of ['a', 'b']) {
      for (let r = 1; r <= 3; r++) {
        const pair = eps.filter((e) => e.scenario.id === id && e.repeat === r);
        expect(pair.map((e) => e.side).sort()).toEqual(['base', 'head']);
        expect(pair[0].seed).toBe(pair[1].seed);
        // side by side in the plan, so both sides run under the same machine conditions
        expect(Math.abs(eps.indexOf(pair[0]) - eps.indexOf(pair[1]))).toBe(1);
      }
    }
    // which side goes first alternates
    expect(new Set(eps.filter((_, i) => i % 2 === 0).map((e) => e.side))).toEqual(new Set(['base', 'head']));
    expect(new Set(eps.map((e) => e.id)).size).toBe(12);
  });

  it('derives different seeds per repeat and scenario, stable across runs', () => {
    expect(seedFor('h', 'a', 1)).toBe(seedFor('h', 'a', 1));
    expect(seedFor('h', 'a', 1)).not.toBe(seedFor('h', 'a', 2));
    expect(seedFor('h', 'a', 1)).not.toBe(seedFor('h', 'b', 1));
    expect(seedFor('h', 'a', 1)).not.toBe(seedFor('h2', 'a', 1));
  });
});

describe('shards', () => {
  it('parses I/N and rejects nonsense with the expected shape', () => {
    expect(parseShard('2/4')).toEqual({ index: 2, total: 4 });
    expect(() => parseShard('0/4')).toThrow(/I\/N/);
    expect(() => parseShard('5/4')).toThrow(/I\/N/);
    expect(() => parseShard('x')).toThrow(/got "x"/);
  });

  it('slices every scenario into exactly one shard', () => {
    const all = Array.from({ length: 50 }, (_, i) => scenario(`case-${i}`));
    const slices = [1, 2, 3].map((index) => sliceScenarios(all, { index, total: 3 }).map((s) => s.id));
    expect(slices.flat().sort()).toEqual(all.map((s) => s.id).sort());
    expect(slices.every((s) => s.length > 5)).toBe(true);
    expect(shardOf('case-7', 3)).toBe(shardOf('case-7', 3));
  });
});

describe('canonicalJson', () => {
  it('sorts keys recursively', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ y: 1, x: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[{"x":2,"y":1}]},"b":1}',
    );
  });
});
