// The one escaper for every string Stategate renders from what a suite, an agent, a database or a
// report says: GitHub markdown (PR comment, report.md, check-run and job summaries), plain text
// (check-run annotations, terminal) and XML (JUnit). Whatever such a string holds, it shows as its
// own text: it never formats, links, mentions anyone, starts a line, breaks a table or a code span.
// (The terminal needs only `visible`: no control character may rewrite the lines around it.)

/** What shows instead of a character that has no visible form of its own. */
export const REPLACEMENT = '\uFFFD';

// Every line ending any renderer might honour: CommonMark's (CR, LF, CRLF), plus VT, FF, NEL and
// the Unicode line and paragraph separators.
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g;
// Control characters (C0, DEL, C1), format characters (bidi embeddings, overrides and isolates,
// zero-width spaces and joiners, BOM, tag characters) and lone surrogates: invisible, or able to
// make the text around them look like something else.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}]/gu;
// Inserted where GitHub would otherwise see a mention, a reference or a link; never typed by a
// caller (typed ones were replaced already), so it only ever means "neutralised here".
const BREAK = '\u200B';

/** One line of visible text: line endings and tabs become spaces, other invisible characters `�`. */
export function visible(text: string): string {
  return text.replace(LINE_BREAK, ' ').replace(/\t/g, ' ').replace(INVISIBLE, REPLACEMENT);
}

/**
 * Breaks what GitHub turns into links and notifications in rendered text (it finds them after
 * markdown, so backslashes do not stop it): @mentions and e-mail addresses, #123 and GH-123
 * references, `scheme://` and `www.` links. A zero-width space keeps the visible text unchanged.
 */
function defuse(text: string): string {
  return (
    text
      // A mention follows anything but an ASCII word character; an address has a dot in its domain,
      // which a GFM renderer takes even where the domain starts with it (`a@.b`).
      .replace(/(?<![A-Za-z0-9_])@(?=[\p{L}\p{N}_])/gu, `@${BREAK}`)
      .replace(/@(?=[\p{L}\p{N}_.-]*\.[\p{L}\p{N}_-])/gu, `@${BREAK}`)
      .replace(/#(?=[\p{L}\p{N}_])/gu, `#${BREAK}`)
      .replace(/(GH)-(?=\d)/gi, `$1-${BREAK}`)
      .replace(/:(?=\/\/)/g, `${BREAK}:`)
      .replace(/(www)\./gi, `$1${BREAK}.`)
  );
}

/**
 * Cuts text to at most `max` characters (code points, never half a surrogate pair), ending in `…`
 * when cut. Cut the raw text, then escape: an escape is never split.
 */
export function clip(text: string, max: number): string {
  const points = Array.from(text);
  if (points.length <= max) return text;
  return `${points.slice(0, Math.max(0, max - 1)).join('')}…`;
}

/**
 * Text for inline markdown (a paragraph, a list item, a heading, a table cell): one line, no HTML,
 * no emphasis, links, images, math, mentions or references, no block marker even at a line start,
 * and `|` escaped so a table keeps its columns.
 */
export function mdText(text: string): string {
  return (
    defuse(visible(text))
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/[\\`*{}[\]|~#!$]/g, '\\$&')
      // An underscore inside a word never starts emphasis; elsewhere it might.
      .replace(/(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])/g, '\\_')
      // At a line start these would open a list or underline the line above as a heading, and
      // four spaces a code block: a leading space as a reference leaves nothing to start a block.
      .replace(/^([-+=])/, '\\$1')
      .replace(/^(\d{1,9})([.)])(?= |$)/, '$1\\$2')
      .replace(/^ /, '&#32;')
  );
}

/** Text in a table cell: the same as inline text, which already escapes `|`. */
export function mdCell(text: string): string {
  return mdText(text);
}

/**
 * Breaks `<!--` in text shown verbatim: it renders as is, but a copy of the comment's hidden
 * marker must not appear anywhere in the comment but its first line.
 */
function unmark(text: string): string {
  return text.replace(/<!--/g, `<!${BREAK}--`);
}

/** A code span around content already made one visible line, fenced longer than any backtick run in it. */
function codeSpan(raw: string): string {
  const content = unmark(raw);
  if (content === '') return '` `';
  const longest = Math.max(0, ...(content.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  // A span strips one space from each end, and a backtick at an end would join the fence.
  const pad =
    content.startsWith('`') ||
    content.endsWith('`') ||
    (content.startsWith(' ') && content.endsWith(' ') && content.trim() !== '')
      ? ' '
      : '';
  return `${fence}${pad}${content}${pad}${fence}`;
}

/** Text as an inline code span (outside tables): shown verbatim, one line. */
export function mdCode(text: string): string {
  return codeSpan(visible(text));
}

/**
 * Text as a code span in a table cell: GitHub splits the row at every unescaped `|`, even inside
 * code, so pipes are escaped, and a backslash before one is kept from escaping the escape.
 */
export function mdCellCode(text: string): string {
  return codeSpan(
    visible(text)
      .replace(/\\(?=\|)/g, `\\${BREAK}`)
      .replace(/\|/g, '\\|'),
  );
}

/**
 * Multi-line text as a fenced code block: shown verbatim line by line. The fence is tildes, longer
 * than any run of tildes in the text, so no line of it can close the block.
 */
export function mdBlock(text: string): string {
  const lines = text
    .replace(LINE_BREAK, '\n')
    .split('\n')
    .map((line) => line.replace(/\t/g, '  ').replace(INVISIBLE, REPLACEMENT));
  const longest = Math.max(0, ...lines.flatMap((l) => l.match(/~+/g) ?? []).map((run) => run.length));
  const fence = '~'.repeat(Math.max(3, longest + 1));
  return `${fence}\n${unmark(lines.join('\n'))}\n${fence}`;
}

/** One line of plain text (check-run annotations): visible, with nothing to mention or link. */
export function plainText(text: string): string {
  return defuse(visible(text));
}

// Characters XML 1.0 cannot carry at all, escaped or not: C0 controls but tab and line feed, and
// U+FFFE and U+FFFF; the other invisible characters go too, as in markdown.
const NOT_IN_XML = /[\p{Cc}\p{Cf}\p{Cs}\uFFFE\uFFFF]/gu;

/** Text for an XML attribute or element: line breaks kept as `\n`, invisible characters `�`, markup escaped. */
export function xmlEscape(text: string): string {
  return text
    .replace(LINE_BREAK, '\n')
    .replace(NOT_IN_XML, (ch) => (ch === '\n' || ch === '\t' ? ch : REPLACEMENT))
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}
