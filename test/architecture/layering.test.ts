// Data flows one way (docs/architecture.md): each folder of src/ is a stage that may import only the
// stages before it, and `model/` (with the two leaves `sql/` and `version.ts`) holds the shapes every
// stage shares. Any import that points the other way, or from one front end into the other, fails
// here with the file and the import.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/** The stages in order; stages on one line may not import each other. */
const LAYERS: readonly (readonly string[])[] = [
  ['model', 'sql', 'version'],
  ['expectations'],
  ['config'],
  ['conversation'],
  ['plan'],
  ['sandbox'],
  ['gateway'],
  ['agent'],
  ['grade'],
  ['judge'],
  ['stats'],
  ['gate'],
  ['compare'],
  ['report'],
  ['run'],
  ['cli', 'action'],
];

const rank = new Map(LAYERS.flatMap((names, i) => names.map((n): [string, number] => [n, i])));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The stage a file of src/ belongs to: its top folder, or the file's name for a top-level file. */
function stageOf(path: string): string {
  const [first] = relative(SRC, path).split('/');
  return first.replace(/\.ts$/, '');
}

/** Every relative module a file imports or re-exports, statically or dynamically, as a path. */
function importsOf(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  const specs = [
    ...text.matchAll(/\b(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g),
    ...text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
  ].map((m) => m[1]);
  return specs.filter((s) => s.startsWith('.')).map((s) => resolve(dirname(path), s.replace(/\.js$/, '.ts')));
}

describe('the import graph of src/', () => {
  const files = sourceFiles(SRC);

  it('names every stage it finds', () => {
    const unknown = [...new Set(files.map(stageOf))].filter((s) => !rank.has(s));
    expect(unknown, 'a new folder of src/ needs a place in LAYERS and in docs/architecture.md').toEqual([]);
  });

  it('has no stage importing a later one, or a front end importing the other', () => {
    const wrong: string[] = [];
    for (const file of files) {
      const from = stageOf(file);
      for (const target of importsOf(file)) {
        const to = stageOf(target);
        if (to === from) continue;
        const a = rank.get(from);
        const b = rank.get(to);
        if (a === undefined || b === undefined || b >= a) {
          wrong.push(
            `src/${relative(SRC, file)} imports src/${relative(SRC, target)} (${to} is not before ${from})`,
          );
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('keeps report/ to rendering: it decides nothing (gate/) and compares nothing (compare/)', () => {
    const wrong = files
      .filter((file) => stageOf(file) === 'report')
      .flatMap((file) =>
        importsOf(file)
          .filter((target) => ['gate', 'compare'].includes(stageOf(target)))
          .map((target) => `src/${relative(SRC, file)} imports src/${relative(SRC, target)}`),
      );
    expect(wrong).toEqual([]);
  });
});
