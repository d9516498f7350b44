// The escaper against hostile strings, judged by a real CommonMark (GFM) renderer: whatever a value
// holds, the document keeps its one heading, its table keeps its cells, nothing renders as HTML, a
// link or a mention, and the value's visible text is all still there.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  clip,
  mdBlock,
  mdCell,
  mdCellCode,
  mdCode,
  mdText,
  plainText,
  visible,
  xmlEscape,
} from '../../src/report/escape.js';
import {
  elements,
  liveReferences,
  renderHtml,
  strayMarkup,
  textOutsideCode,
  textsOf,
} from '../helpers/commonmark.js';
import { HOSTILE } from '../helpers/hostile.js';

const ALLOWED = ['h2', 'ul', 'li', 'p', 'strong', 'code', 'table', 'thead', 'tbody', 'tr', 'th', 'td'];

/** A small report-shaped document with the value in every place the renderer puts one. */
function documentWith(value: string): string {
  return [
    '## Stategate: BLOCK',
    '',
    `- blocks: ${mdText(value)}`,
    '',
    `**Why:** ${mdText(value)} then ${mdCode(value)}`,
    '',
    mdText(value),
    '',
    '| value | code |',
    '| --- | --- |',
    `| ${mdCell(value)} | ${mdCellCode(value)} |`,
    '',
    'Full report: report.json.',
    '',
  ].join('\n');
}

const unbreak = (s: string) => s.replace(/\u200B/g, '');
const same = (rendered: string, expected: string) =>
  expect(unbreak(rendered).replace(/^ +| +$/g, '')).toBe(expected.replace(/^ +| +$/g, ''));

/** Everything a reviewer would check in the rendered document, for one value. */
function assertInert(value: string): void {
  const html = renderHtml(documentWith(value));
  const shown = visible(value);
  expect(strayMarkup(html, ALLOWED)).toEqual([]);
  const names = elements(html);
  const tally = (n: string) => names.filter((x) => x === n).length;
  expect(names.filter((n) => !ALLOWED.includes(n))).toEqual([]);
  expect(tally('h2')).toBe(1);
  expect(textsOf(html, 'h2')).toEqual(['Stategate: BLOCK']);
  expect([tally('ul'), tally('li'), tally('strong'), tally('code')]).toEqual([1, 1, 1, 2]);
  expect([tally('table'), tally('tr'), tally('th'), tally('td')]).toEqual([1, 2, 2, 2]);
  expect(tally('p')).toBe(value === '' ? 2 : 3);
  expect(liveReferences(textOutsideCode(html))).toEqual([]);
  // Inert, not deleted: each place shows the value's visible text.
  const [item] = textsOf(html, 'li');
  same(item, `blocks: ${shown}`);
  const code = shown === '' ? ' ' : shown;
  const [why, last] = textsOf(html, 'p');
  same(why, `Why: ${shown} then ${code}`);
  if (value !== '') same(last, shown);
  const codes = textsOf(html, 'code');
  expect(unbreak(codes[0])).toBe(code);
  expect(unbreak(codes[1])).toBe(code);
  const [cell] = textsOf(html, 'td');
  same(cell, shown);
}

describe('markdown escaping, rendered by a CommonMark (GFM) renderer', () => {
  for (const value of HOSTILE) {
    it(`keeps ${JSON.stringify(value)} inert and visible`, () => assertInert(value));
  }

  it('keeps any string inert and visible, control characters and all', () => {
    const special = fc.constantFrom(
      ...'\r\n\t\v\f\u0085\u2028\u2029\u202E\u2066\u200B\u200D\uFEFF\u0000\u001B\u007F\u009B'.split(''),
      ...'`<>&[]()|\\@#*_-=+!$~:/.! 1'.split(''),
      'http://',
      'www.',
      'GH-1',
      '<img src=x>',
      '<!--',
      '-->',
      '```',
      '    ',
    );
    const anyChar = fc.integer({ min: 0, max: 0x10ffff }).map((cp) => String.fromCodePoint(cp));
    const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((u) => String.fromCharCode(u));
    const word = fc.constantFrom('a', 'team', 'PASS', 'x', 'é', '2');
    const value = fc
      .array(fc.oneof({ weight: 6, arbitrary: special }, word, anyChar, loneSurrogate), { maxLength: 24 })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(value, (v) => {
        assertInert(v);
      }),
      { numRuns: 400 },
    );
  });
});

describe('the other renderings', () => {
  it('shows line endings as spaces and invisible characters as the replacement character', () => {
    expect(visible('a\r\nb\rc\nd\u2028e\tf')).toBe('a b c d e f');
    expect(visible('\u202Eevil\u0000\u001B[0m\uD800')).toBe('\uFFFDevil\uFFFD\uFFFD[0m\uFFFD');
    expect(visible('emoji 😀')).toBe('emoji 😀');
  });

  it('keeps multi-line text verbatim in a fenced block no line can close', () => {
    const text = 'first\r~~~\r\n````\nlast <img src=x> @team';
    const html = renderHtml(`## Stategate: BLOCK\n\n${mdBlock(text)}\n\nafter\n`);
    expect(elements(html)).toEqual(['h2', 'pre', 'code', 'p']);
    expect(textsOf(html, 'code')).toEqual(['first\n~~~\n````\nlast <img src=x> @team\n']);
    expect(liveReferences(textOutsideCode(html))).toEqual([]);
  });

  it('gives plain text one line with nothing to mention or link', () => {
    const text = plainText('hi @team\r# PASS http://evil www.evil #3 \u202E');
    expect(text).not.toMatch(/[\r\n\u202E]/);
    expect(liveReferences(text)).toEqual([]);
    expect(unbreak(text)).toBe('hi @team # PASS http://evil www.evil #3 \uFFFD');
  });

  it('escapes XML and drops what XML cannot carry, keeping line breaks', () => {
    expect(xmlEscape('a<b>&"\'')).toBe('a&lt;b&gt;&amp;&quot;&apos;');
    expect(xmlEscape('one\r\ntwo\rthree\u0000\u001B\u202E\uFFFE\uD800')).toBe(
      'one\ntwo\nthree\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD',
    );
  });

  it('clips by characters, never inside a surrogate pair, before escaping', () => {
    expect(clip('abcdef', 4)).toBe('abc…');
    expect(clip('abc', 3)).toBe('abc');
    expect(clip('😀😀😀😀', 3)).toBe('😀😀…');
    // Clipped first, escaped after: the cut never leaves half an escape or an open code span.
    const value = `${'`'.repeat(3)}${'<'.repeat(10)}`;
    expect(mdText(clip(value, 6))).toBe('\\`\\`\\`&lt;&lt;…');
    expect(mdCode(clip(value, 6))).toBe('```` ```<<… ````');
  });
});
