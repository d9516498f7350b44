// The options the command line and the action share (`--fail-on` and `fail-on:`, `--engine` and
// `engine:`, ...): one parser each, so both accept the same values and describe a bad one alike.
// A parser throws an OptionError whose message starts at "expected"; the caller names the option the
// way its user wrote it (`--engine: ...` on the command line, `engine: ...` in a workflow).

import { ENGINE_NAMES } from '../model/engine.js';

/** The options that take one of a fixed set of words, with the accepted words in the order help lists them. */
export const CHOICES = {
  'fail-on': ['block', 'warn', 'never'],
  engine: ['auto', ...ENGINE_NAMES],
  'policy-from': ['base', 'head'],
  'suite-from': ['head', 'base'],
  isolation: ['process', 'container', 'none'],
  sudo: ['auto', 'never'],
  lang: ['python', 'typescript'],
} as const;

export type ChoiceOption = keyof typeof CHOICES;
export type Choice<N extends ChoiceOption> = (typeof CHOICES)[N][number];

/** --fail-on / the action's fail-on input: the level at which the gate fails. */
export type FailOn = Choice<'fail-on'>;

/** --sudo / the action's sudo input: whether the agent's sandbox may run through passwordless sudo. */
export type SudoMode = Choice<'sudo'>;

/**
 * The sudo mode a run uses: the option when given, else STATEGATE_SUDO=never in the harness's
 * environment (kept for workflows that set it), else auto.
 */
export function sudoMode(option: SudoMode | undefined, env: NodeJS.ProcessEnv): SudoMode {
  return option ?? (env.STATEGATE_SUDO === 'never' ? 'never' : 'auto');
}

/** A value an option does not accept; the message says what was expected and what was given. */
export class OptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OptionError';
  }
}

/** "block, warn or never". */
function listed(words: readonly string[]): string {
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

/** Reads one of the words of an option. */
export function parseChoice<N extends ChoiceOption>(name: N, text: string): Choice<N> {
  const words: readonly string[] = CHOICES[name];
  if (words.includes(text)) return text as Choice<N>;
  throw new OptionError(`expected ${listed(words)}, got "${text}"`);
}

/** One slice of the suite: `I/N`, 1-based. */
export interface Shard {
  index: number;
  total: number;
}

/** Reads `I/N` with 1 <= I <= N. */
export function parseShard(text: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const index = m ? Number(m[1]) : Number.NaN;
  const total = m ? Number(m[2]) : Number.NaN;
  if (!m || total < 1 || index < 1 || index > total) {
    throw new OptionError(`expected I/N with 1 <= I <= N (e.g. 2/4), got "${text}"`);
  }
  return { index, total };
}

/** The options that take a count, with the most each accepts (the config file's own limits). */
export const COUNTS = { repeats: 1000, concurrency: 256 } as const;

export type CountOption = keyof typeof COUNTS;

/** Reads a count in decimal digits, from 1 to the option's most (`0x10`, `1e2` and `5000` are refused). */
export function parseCount(name: CountOption, text: string): number {
  const max = COUNTS[name];
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new OptionError(`expected a whole number from 1 to ${max}, got "${text}"`);
  }
  return n;
}
