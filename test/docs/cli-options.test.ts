// Every stategate option the docs use is one `stategate --help` lists, and the parser accepts:
// an option in README.md, docs/ or an example's README that the command does not know would send a
// newcomer to "Unknown option". Options of other tools the docs quote are listed here by their tool.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HELP, OPTIONS, VERSION } from '../../src/cli/main.js';
import { ROOT } from '../helpers/demo-repo.js';

/** Options the docs quote that belong to another program, with that program. */
const FOREIGN: Record<string, string> = {
  '--auth': 'initdb',
  '--encoding': 'initdb',
  '--locale': 'initdb',
  '--no-sync': 'initdb',
  '--die-with-parent': 'bubblewrap',
  '--image': 'bench/isolation.ts',
  '--jitless': 'node',
  '--trace-gc': 'node',
  '--max-semi-space-size': 'node',
  '--no-opt': 'node',
  '--max-lazy': 'node',
};

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

const FILES = [
  join(ROOT, 'README.md'),
  ...markdownFiles(join(ROOT, 'docs')),
  ...readdirSync(join(ROOT, 'examples'))
    .map((d) => join(ROOT, 'examples', d, 'README.md'))
    .filter((f) => {
      try {
        return statSync(f).isFile();
      } catch {
        return false;
      }
    }),
];

/**
 * Each option the docs give to stategate, with the files using it: the options on a line of a code
 * block or in a code span that runs stategate, and code spans that are an option on their own.
 */
function documentedOptions(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  for (const file of FILES) {
    const text = readFileSync(file, 'utf8');
    const blocks = [...text.matchAll(/^```[a-z]*\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
    const prose = text.replace(/^```[a-z]*\n[\s\S]*?^```$/gm, '');
    const spans = [...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
    for (const piece of [...blocks.flatMap((b) => b.split('\n')), ...spans]) {
      // What follows the command's name (`npx --yes stategate@0.1.0 run ...`: not npx's options).
      const command = /\bstategate(?:\.mjs|@[\w.-]+)? [a-z]/.exec(piece);
      if (!command && !piece.startsWith('--')) continue;
      const args = command ? piece.slice(command.index) : piece;
      for (const [option] of args.matchAll(/(?<![\w-])--[a-z][a-z0-9-]+/g)) {
        if (!found.has(option)) found.set(option, new Set());
        found.get(option)!.add(relative(ROOT, file));
      }
    }
  }
  return found;
}

describe('the options the docs use', () => {
  const documented = documentedOptions();

  it('finds the options it should (the scan works)', () => {
    for (const option of ['--repeats', '--scenario', '--tag', '--dir', '--database-url', '--lang'])
      expect([...documented.keys()], option).toContain(option);
  });

  it('are each listed by stategate --help and accepted by its parser', () => {
    const unknown = [...documented]
      .filter(([option]) => !(option in FOREIGN))
      .filter(
        ([option]) =>
          !new RegExp(`(^|\\s)${option}(?![\\w-])`, 'm').test(HELP) || !(option.slice(2) in OPTIONS),
      )
      .map(([option, files]) => `${option} (${[...files].join(', ')})`);
    expect(unknown).toEqual([]);
  });

  it('of other programs are still quoted where this test says (the list does not rot)', () => {
    for (const option of Object.keys(FOREIGN)) expect([...documented.keys()], option).toContain(option);
  });

  it('in the README pin the version this package is (npx stategate@VERSION)', () => {
    const pins = [...readFileSync(join(ROOT, 'README.md'), 'utf8').matchAll(/\bstategate@(\d[\w.-]*)/g)];
    expect(pins.length).toBeGreaterThan(0);
    for (const [, version] of pins) expect(version).toBe(VERSION);
    // --version, the baseline cache key and the package are one version.
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version).toBe(VERSION);
  });

  it('and --help lists every option the parser accepts', () => {
    const unlisted = Object.keys(OPTIONS).filter(
      (name) => !new RegExp(`(^|\\s)--${name}(?![\\w-])`, 'm').test(HELP),
    );
    expect(unlisted).toEqual([]);
  });
});
