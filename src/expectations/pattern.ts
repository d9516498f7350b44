// Every regular expression a suite holds (`reply_matches`, `matches`, a user fact's `asked`) is compiled here, with RE2
// semantics (re2js): matching takes time linear in the text, so no reply or value a head's agent
// leaves behind can stall the harness (`^(a+)+$` against 45 a's and a bang is one pass, not 2^45).
import { RE2JS } from 're2js';

/** A compiled suite pattern: found anywhere in the text, like RegExp.prototype.test. */
export interface SuitePattern {
  test(text: string): boolean;
}

/** What RE2 has no linear-time form of, as a user would look it up. */
const UNSUPPORTED: { test: RegExp; what: string }[] = [
  { test: /\\[1-9]|\\k</, what: 'backreferences (\\1, \\k<name>)' },
  { test: /\(\?<?[=!]/, what: 'lookaround ((?=, (?!, (?<=, (?<!)' },
  { test: /\(\?>/, what: 'atomic groups ((?>...))' },
  { test: /[*+?}]\+/, what: 'possessive quantifiers (a*+, a++)' },
];

const EXPECTED =
  'expected a regular expression in RE2 syntax (linear-time matching: no backreferences, no lookaround)';

/**
 * Compiles a suite pattern; `error` says what is wrong and what was expected when RE2 cannot
 * compile it (a backreference, a lookaround, a syntax error).
 */
export function compileSuitePattern(
  pattern: string,
  options: { caseInsensitive?: boolean } = {},
): { pattern: SuitePattern } | { error: string } {
  try {
    return { pattern: RE2JS.compile(pattern, options.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0) };
  } catch (err) {
    const unsupported = UNSUPPORTED.find((u) => u.test.test(pattern));
    const why = unsupported
      ? `${unsupported.what} cannot be matched in linear time`
      : `${(err as Error).message.replace(/^error parsing regexp: /, '')}`;
    return { error: `not a valid regular expression: ${why}; ${EXPECTED}` };
  }
}
