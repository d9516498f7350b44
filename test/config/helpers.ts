// Shared by the config tests: a valid suite on disk, copied to a temporary directory and edited.
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Problem } from '../../src/config/suite.js';

/** A complete, valid suite: every format feature in use. */
export const VALID_DIR = fileURLToPath(new URL('./fixtures/valid/', import.meta.url));
/** The variables the valid suite's stategate.yml expands. */
export const VALID_ENV = { STATEGATE_ENGINE: 'postgres', REPEATS: '3' };
export const CORPUS_DIR = fileURLToPath(new URL('./corpus/', import.meta.url));

/** A temporary parent directory for this test file's suites; `remove()` deletes it. */
export async function tempRoot(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `stategate-config-${randomBytes(4).toString('hex')}-`));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Copies the valid suite into a new directory under `parent` and applies `edits`: a path relative to
 * the suite gets the given content, or is deleted when the content is null. Returns the directory.
 */
export async function makeSuite(
  parent: string,
  edits: Record<string, string | Uint8Array | null> = {},
): Promise<string> {
  const dir = path.join(parent, randomBytes(6).toString('hex'));
  await cp(VALID_DIR, dir, { recursive: true });
  for (const [rel, content] of Object.entries(edits)) {
    const abs = path.join(dir, rel);
    if (content === null) await unlink(abs);
    else {
      await mkdir(path.dirname(abs), { recursive: true });
      await writeFile(abs, content);
    }
  }
  return dir;
}

/** Where a corpus file goes in a suite, by its name prefix. */
export function corpusTarget(name: string): string {
  if (name.startsWith('scenario-')) return 'scenarios/zz-corpus.yaml';
  if (name.startsWith('twin-')) return 'twins/zz-corpus.yaml';
  if (name.startsWith('config-')) return 'stategate.yml';
  if (name.startsWith('fixture-')) return 'db/fixtures.yaml';
  throw new Error(`corpus file ${name} has no known prefix`);
}

/** A corpus file's expectation from its first line: `# expect LINE[:COL] message text`. */
export function corpusExpectation(bytes: Uint8Array): { line: number; col?: number; text: string } | null {
  const first = Buffer.from(bytes.subarray(0, 400)).toString('latin1').split('\n')[0];
  const m = /^# expect (\d+)(?::(\d+))? (.+)$/.exec(first);
  return m ? { line: Number(m[1]), col: m[2] ? Number(m[2]) : undefined, text: m[3] } : null;
}

/** True when a message looks like a leaked stack trace or an internal error rather than a problem. */
export function looksLikeCrash(p: Problem): boolean {
  return /\n\s+at |TypeError|ReferenceError|RangeError|undefined is not|Cannot read prop/.test(p.message);
}
