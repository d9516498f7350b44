// GitHub refuses check-run summaries and comments over 65,535 characters: trim at a line, say so.

/** The check-run summary limit; comments allow one more, the same bound keeps it simple. */
export const GITHUB_TEXT_LIMIT = 65_535;

/**
 * Returns `text` unchanged when it fits under `limit`, else its longest prefix ending at a line
 * break followed by `note`, the whole kept under `limit`.
 */
export function trimMarkdown(text: string, limit: number, note: string): string {
  if (text.length < limit) return text;
  const tail = `\n\n${note}\n`;
  const room = limit - 1 - tail.length;
  if (room <= 0) return tail.slice(0, limit - 1);
  let cut = text.lastIndexOf('\n', room);
  if (cut <= 0) cut = room;
  // A cut inside a fenced block would swallow the note into the block; close the fence first.
  let head = text.slice(0, cut);
  if ((head.match(/^```/gm) ?? []).length % 2 === 1) {
    const fence = '\n```';
    head = text.slice(0, Math.max(0, text.lastIndexOf('\n', room - fence.length))) + fence;
  }
  return head + tail;
}
