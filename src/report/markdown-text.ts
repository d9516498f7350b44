// Text made safe for GitHub markdown: what agents and records say must never format, link, mention
// anyone, break a table or forge the comment's hidden marker.

/** Escapes text for markdown: no formatting, no HTML, no mentions, one line. */
export function mdText(text: string): string {
  return (
    text
      .replace(/\r?\n/g, ' ')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/[\\`*{}[\]|~#!]/g, '\\$&')
      // An underscore inside a word never starts emphasis; elsewhere it might.
      .replace(/(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])/g, '\\_')
      .replace(/(^|[^\w])@(?=\w)/g, '$1@\u200b')
  );
}

/** Text as an inline code span, with a fence longer than any backtick run inside. */
export function mdCode(text: string): string {
  const flat = text.replace(/\r?\n/g, ' ');
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}
