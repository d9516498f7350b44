// The phrases a user fact is asked with (`asked:`), compiled once: a plain phrase matches
// case-insensitively on word boundaries, whitespace inside it matching any run of whitespace; an
// entry written `/.../` is a regular expression (RE2: linear time, so no agent turn can stall the
// harness), matched case-insensitively too.
import { RE2JS } from 're2js';
import { compileSuitePattern, type SuitePattern } from './pattern.js';

/** Anything but a letter, digit or underscore in any script: what a word boundary sits next to. */
const NOT_WORD = '[^\\p{L}\\p{N}_]';

/** Whether an `asked` entry is a regular expression (`/.../`). */
export function isPatternEntry(entry: string): boolean {
  return entry.length >= 2 && entry.startsWith('/') && entry.endsWith('/');
}

/** The RE2 source an `asked` entry stands for. */
export function askedSource(entry: string): string {
  if (isPatternEntry(entry)) return entry.slice(1, -1);
  const words = entry
    .trim()
    .split(/\s+/)
    .map((w) => RE2JS.quote(w));
  // No lookaround in RE2: the boundary is the text's edge or a non-word character, consumed.
  return `(?:^|${NOT_WORD})${words.join('\\s+')}(?:$|${NOT_WORD})`;
}

/** Compiles an `asked` entry, case-insensitive; `error` says why it cannot be (file checks report it). */
export function compileAsked(entry: string): { pattern: SuitePattern } | { error: string } {
  return compileSuitePattern(askedSource(entry), { caseInsensitive: true });
}
