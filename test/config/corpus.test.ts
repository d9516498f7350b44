// The corpus of broken files: each one, dropped into an otherwise valid suite, must come back as a
// problem at the position its first line names (`# expect LINE[:COL] text`), never as a throw.
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSuite } from '../../src/config/load.js';
import { MAX_FILE_BYTES } from '../../src/config/source-file.js';
import type { Problem } from '../../src/config/suite.js';
import {
  CORPUS_DIR,
  corpusExpectation,
  corpusTarget,
  looksLikeCrash,
  makeSuite,
  tempRoot,
  VALID_ENV,
} from './helpers.js';

// Files that cannot carry a header line.
const HEADERLESS: Record<string, { line: number; col: number; text: string }> = {
  'scenario-binary-garbage.yaml': { line: 1, col: 1, text: 'not a text file' },
  'scenario-empty-zero-bytes.yaml': { line: 1, col: 1, text: 'the file is empty' },
};

// corpus/biome.json keeps the formatter away from files that are broken on purpose.
const names = readdirSync(CORPUS_DIR)
  .filter((n) => n !== 'biome.json')
  .sort();

let root: Awaited<ReturnType<typeof tempRoot>>;
beforeAll(async () => {
  root = await tempRoot();
});
afterAll(async () => {
  await root.remove();
});

async function loadWith(rel: string, content: Uint8Array) {
  const dir = await makeSuite(root.dir, { [rel]: content });
  const result = await loadSuite(path.join(dir, 'stategate.yml'), { env: VALID_ENV });
  return { dir, result, target: path.join(dir, rel) };
}

describe('corpus of broken files', () => {
  it('has at least 50 files, each with an expectation', () => {
    expect(names.length).toBeGreaterThanOrEqual(50);
    for (const name of names) {
      const expected = HEADERLESS[name] ?? corpusExpectation(readFileSync(path.join(CORPUS_DIR, name)));
      expect(expected, name).not.toBeNull();
    }
  });

  it.each(names)('%s: a problem at the named position', async (name) => {
    const bytes = readFileSync(path.join(CORPUS_DIR, name));
    const expected = HEADERLESS[name] ?? corpusExpectation(bytes)!;
    const rel = corpusTarget(name);
    const { result, target } = await loadWith(rel, bytes);
    expect(result.ok, name).toBe(false);
    if (result.ok) return;
    const problems = result.problems;
    for (const p of problems) {
      expect(p.line).toBeGreaterThanOrEqual(1);
      expect(p.col).toBeGreaterThanOrEqual(1);
      expect(looksLikeCrash(p), p.message).toBe(false);
    }
    const inTarget = problems.filter((p) => path.resolve(p.file) === target);
    const match = inTarget.find(
      (p) =>
        p.line === expected.line &&
        (expected.col === undefined || p.col === expected.col) &&
        p.message.includes(expected.text),
    );
    expect(match, `${name}: got\n${problems.map(show).join('\n')}`).toBeDefined();
    // A broken scenario or twin file is reported in that file, not as collateral elsewhere. (A
    // config without a judge also makes the valid suite's judge expectation a problem: allowed.)
    if (!name.startsWith('config-')) expect(problems.map(show)).toEqual(inTarget.map(show));
  });

  it('refuses a 50 MB file before reading it, with the limit in the message', async () => {
    const big = new Uint8Array(50 * 1024 * 1024).fill(0x61);
    const dir = await makeSuite(root.dir);
    const file = path.join(dir, 'scenarios', 'huge.yaml');
    await writeFile(file, big);
    const result = await loadSuite(path.join(dir, 'stategate.yml'), { env: VALID_ENV });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const problem = result.problems.find((p) => path.resolve(p.file) === file);
    expect(problem).toMatchObject({ line: 1, col: 1 });
    expect(problem?.message).toContain('50.0 MB');
    expect(problem?.message).toContain(`limit is ${MAX_FILE_BYTES / 1024 / 1024} MB per file`);
  });

  it('refuses a 50 MB schema file too', async () => {
    const dir = await makeSuite(root.dir);
    await writeFile(path.join(dir, 'db', 'schema.sql'), new Uint8Array(50 * 1024 * 1024).fill(0x20));
    const result = await loadSuite(path.join(dir, 'stategate.yml'), { env: VALID_ENV });
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.problems.map((p) => p.message).join('\n')).toContain('limit is 5 MB per file');
  });
});

function show(p: Problem): string {
  return `${path.basename(p.file)}:${p.line}:${p.col}: ${p.message}`;
}
