// Markdown as GitHub renders it, for tests that check what a reviewer would see: micromark with the
// GFM extensions (tables, autolink literals, strikethrough, footnotes), raw HTML passed through so a
// leak shows, then a small reader of the HTML it produces.
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';

/** Renders markdown to HTML the way GFM does, keeping raw HTML (GitHub would keep some of it too). */
export function renderHtml(markdown: string): string {
  return micromark(markdown, {
    allowDangerousHtml: true,
    extensions: [gfm()],
    htmlExtensions: [gfmHtml()],
  });
}

/** The elements a report's own markdown renders to: its structure, and nothing a value could add. */
export const REPORT_ELEMENTS = [
  'h2',
  'h3',
  'h4',
  'p',
  'ul',
  'li',
  'strong',
  'code',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'details',
  'summary',
  'sub',
  // An agent's stderr tail, fenced.
  'pre',
];

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"' };

/** HTML text decoded: micromark escapes exactly these four characters in text. */
export function decode(html: string): string {
  return html.replace(/&(amp|lt|gt|quot);/g, (_, e: string) => ENTITIES[e]);
}

/** The names of the elements in rendered HTML, in order (closing tags not counted). */
export function elements(html: string): string[] {
  return [...html.matchAll(/<([A-Za-z][A-Za-z0-9-]*)/g)].map((m) => m[1].toLowerCase());
}

/**
 * What is left of the HTML once the allowed tags (bare, as micromark writes them) and comments
 * matching `comment` are removed: micromark writes `<` and `>` in text as entities, so any `<` or
 * `>` left is markup that came from the input.
 */
export function strayMarkup(html: string, allowed: readonly string[], comment?: string): string[] {
  const tag = new RegExp(`</?(${allowed.join('|')})( align="(left|right|center)")?>`, 'g');
  let rest = html.replace(tag, '');
  if (comment !== undefined) rest = rest.split(comment).join('');
  return rest.match(/[<>][^<>]{0,30}/g) ?? [];
}

/** The text of every element named `name` (its inner HTML with tags stripped, decoded). */
export function textsOf(html: string, name: string): string[] {
  const re = new RegExp(`<${name}(?:\\s[^>]*)?>([\\s\\S]*?)</${name}>`, 'g');
  return [...html.matchAll(re)].map((m) => decode(m[1].replace(/<[^>]*>/g, '')));
}

/** The text outside code spans and blocks: where GitHub looks for mentions, references and links. */
export function textOutsideCode(html: string): string {
  return decode(
    html
      .replace(/<code>[\s\S]*?<\/code>/g, ' ')
      .replace(/<pre>[\s\S]*?<\/pre>/g, ' ')
      .replace(/<[^>]*>/g, ' '),
  );
}

/**
 * What GitHub would turn into a notification or a link in rendered text: an @mention (after a
 * character that is not an ASCII word character), an e-mail address, a #123 or GH-123 reference,
 * a `scheme://` or `www.` link.
 */
export function liveReferences(text: string): string[] {
  return (
    text.match(
      /(?<![A-Za-z0-9_])@[\p{L}\p{N}_]|@[\p{L}\p{N}_-]+\.[\p{L}\p{N}_-]|#[\p{L}\p{N}_]|GH-\d|[A-Za-z]:\/\/|www\.[\p{L}\p{N}]/giu,
    ) ?? []
  );
}
