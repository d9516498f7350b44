// The project's docs and sources stand alone: every relative link in README.md and docs/ names a file
// that exists (and a heading that exists, when it names one), and no file a user receives cites a
// document they do not have.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function files(dir: string, ext: RegExp): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) out.push(...files(path, ext));
    else if (ext.test(name)) out.push(path);
  }
  return out;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const set = new Set<string>();
  for (const line of markdown.split('\n')) {
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    set.add(
      m[1]
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    );
  }
  return set;
}

const docs = ['README.md', ...files('docs', /\.md$/), ...files('examples', /\.md$/)];

describe('docs that stand alone', () => {
  it('cite no document outside the repository', () => {
    const shipped = [...docs, ...files('src', /\.ts$/), ...files('test', /\.ts$/), 'action.yml'];
    const citing = shipped.filter(
      (f) => f !== 'test/docs/standalone.test.ts' && /DESIGN\.md/.test(readFileSync(join(ROOT, f), 'utf8')),
    );
    expect(citing).toEqual([]);
  });

  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const doc of docs) {
      const text = readFileSync(join(ROOT, doc), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target)) continue;
        const [path, anchor] = target.split('#');
        // The README's action section is kept in docs/ but read inside README.md, at the root.
        const from = doc === 'docs/action-readme-section.md' ? 'README.md' : doc;
        const file = path ? join(dirname(from), path) : doc;
        if (!existsSync(join(ROOT, file))) {
          broken.push(`${doc}: ${target} (no file ${relative('.', file)})`);
          continue;
        }
        if (anchor && file.endsWith('.md') && !anchors(readFileSync(join(ROOT, file), 'utf8')).has(anchor))
          broken.push(`${doc}: ${target} (no heading #${anchor} in ${file})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
