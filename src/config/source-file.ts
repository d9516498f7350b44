// Reading one suite file as text, with the guards every loader needs: a size cap and a check that
// the bytes are UTF-8 text, so garbage becomes a Problem with a position instead of a parser crash.
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Problem } from './suite.js';

/** Files larger than this are refused before reading: suite files are small, hand-written text. */
export const MAX_FILE_BYTES = 5 * 1024 * 1024;

/** The path a person would type: relative to the working directory when inside it, else absolute. */
export function displayPath(absPath: string): string {
  const rel = path.relative(process.cwd(), absPath);
  if (rel === '') return '.';
  const outside = rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel);
  return outside ? absPath : rel;
}

/** A suite-relative path with forward slashes, the form used as a key in `Suite.files`. */
export function suitePath(root: string, absPath: string): string {
  return path.relative(root, absPath).split(path.sep).join('/');
}

export type ReadResult = { ok: true; text: string } | { ok: false; problem: Problem; missing?: boolean };

/** Reads a UTF-8 text file, or says precisely why it cannot be one (missing, too large, binary). */
export async function readTextFile(absPath: string, file: string): Promise<ReadResult> {
  const fail = (message: string, line = 1, col = 1): ReadResult => ({
    ok: false,
    problem: { file, line, col, message },
  });
  let bytes: Buffer;
  try {
    const info = await stat(absPath);
    if (!info.isFile()) return fail('not a regular file');
    if (info.size > MAX_FILE_BYTES) return fail(tooLarge(info.size));
    bytes = await readFile(absPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      return { ok: false, missing: true, problem: { file, line: 1, col: 1, message: 'file not found' } };
    if (code === 'EACCES') return fail('permission denied');
    return fail(`cannot read the file: ${(err as Error).message}`);
  }
  // The file may have grown between stat and read.
  if (bytes.length > MAX_FILE_BYTES) return fail(tooLarge(bytes.length));
  const bad = firstNonTextByte(bytes);
  if (bad !== -1) {
    const { line, col } = bytePosition(bytes, bad);
    const what =
      bytes[bad] === 0 ? 'a NUL byte' : `byte 0x${bytes[bad].toString(16).padStart(2, '0')}, not UTF-8`;
    return fail(
      `not a text file: ${what} at line ${line}, col ${col} (suite files are UTF-8 text)`,
      line,
      col,
    );
  }
  return { ok: true, text: new TextDecoder('utf-8').decode(bytes) };
}

function tooLarge(size: number): string {
  return `the file is ${(size / 1024 / 1024).toFixed(1)} MB; the limit is ${MAX_FILE_BYTES / 1024 / 1024} MB per file`;
}

/** Offset of the first NUL byte or invalid UTF-8 sequence, or -1. */
function firstNonTextByte(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    if (b === 0) return i;
    if (b < 0x80) {
      i++;
      continue;
    }
    const n = b >= 0xf0 && b <= 0xf4 ? 3 : b >= 0xe0 ? (b <= 0xef ? 2 : -1) : b >= 0xc2 ? 1 : -1;
    if (n === -1 || i + n >= bytes.length) return i;
    for (let k = 1; k <= n; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return i;
    // Overlong three-byte forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    if (b === 0xe0 && bytes[i + 1] < 0xa0) return i;
    if (b === 0xed && bytes[i + 1] >= 0xa0) return i;
    if (b === 0xf0 && bytes[i + 1] < 0x90) return i;
    if (b === 0xf4 && bytes[i + 1] >= 0x90) return i;
    i += n + 1;
  }
  return -1;
}

/** 1-based line and column (in characters) of a byte offset. */
function bytePosition(bytes: Uint8Array, offset: number): { line: number; col: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (bytes[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  const col = new TextDecoder('utf-8').decode(bytes.subarray(lineStart, offset)).length + 1;
  return { line, col };
}
