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
  const open = openFence(head);
  if (open) {
    // Room for the closing fence: cut one line earlier, then close what is still open there.
    head = text.slice(0, Math.max(0, text.lastIndexOf('\n', room - open.length - 1)));
    const still = openFence(head);
    if (still) head += `\n${still}`;
  }
  return head + tail;
}

/**
 * The fence of a code block left open at the end of `text` (backticks or tildes, CommonMark's rule:
 * a block closes only at a fence of the same character at least as long), or null.
 */
export function openFence(text: string): string | null {
  let open: string | null = null;
  for (const line of text.split('\n')) {
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (!m) continue;
    if (open === null) open = m[1];
    else if (m[1][0] === open[0] && m[1].length >= open.length && line.trim() === m[1]) open = null;
  }
  return open;
}
