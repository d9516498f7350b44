// The command line and the action read their shared options through one parser each: the same value
// is accepted or refused by both, with the same words after the option's name.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseInputs } from '../../src/action/inputs.js';
import { CHOICES, COUNTS, parseChoice, parseCount } from '../../src/config/options.js';

const BIN = fileURLToPath(new URL('../../bin/stategate.mjs', import.meta.url));

/** What the action says of one bad input. */
function actionProblem(name: string, value: string): string {
  try {
    parseInputs((input) => (input === name ? value : input === 'github-token' ? 'token' : ''));
  } catch (e) {
    return (e as Error).message;
  }
  return '';
}

/** What `stategate compare` says of one bad option (it stops before reading any file). */
function cliProblem(name: string, value: string): string {
  const r = spawnSync(
    process.execPath,
    [BIN, 'compare', '--base', 'HEAD', '--head', 'HEAD', `--${name}`, value],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  expect(r.status).toBe(1);
  return r.stderr.trim();
}

describe('shared options', () => {
  it('accept every listed word and nothing else', () => {
    for (const [name, words] of Object.entries(CHOICES) as [keyof typeof CHOICES, readonly string[]][]) {
      for (const word of words) expect(parseChoice(name, word)).toBe(word);
      expect(() => parseChoice(name, words[0].toUpperCase())).toThrow(/^expected /);
    }
  });

  it.each([
    ['fail-on', 'always'],
    ['engine', 'docker'],
    ['isolation', 'vm'],
    ['sudo', 'always'],
    ['policy-from', 'pr'],
    ['shard', '5/4'],
    ['repeats', '0x10'],
    ['repeats', '5000'],
    ['repeats', '0'],
    ['repeats', '1e2'],
  ])('--%s and the input %s say the same of a bad value', (name, value) => {
    const action = actionProblem(name, value);
    expect(action).toMatch(new RegExp(`^${name}: expected `));
    expect(cliProblem(name, value)).toBe(`stategate: --${action}`);
  });

  it("counts are decimal digits from 1 to the option's most, read the same by both", () => {
    for (const name of Object.keys(COUNTS) as (keyof typeof COUNTS)[]) {
      expect(parseCount(name, '16')).toBe(16);
      expect(parseCount(name, String(COUNTS[name]))).toBe(COUNTS[name]);
      for (const bad of ['0x10', '1e2', '0', '-1', '1.5', '', String(COUNTS[name] + 1)])
        expect(() => parseCount(name, bad)).toThrow(/^expected a whole number from 1 to /);
    }
    expect(parseInputs((n) => (n === 'repeats' ? '16' : n === 'github-token' ? 'token' : '')).repeats).toBe(
      16,
    );
  });
});
