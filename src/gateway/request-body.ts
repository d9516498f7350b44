// Reading a request body within bounds: a size cap, a nesting cap checked on the raw text before any
// parser sees it, and a cut-off signal (the episode's end) that stops a body still arriving.
import type { IncomingMessage } from 'node:http';

/** Request bodies above this size get 413 PAYLOAD_TOO_LARGE. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Arguments nested deeper than this get 400 BODY_TOO_DEEP (a parser or a walker could overflow its stack). */
export const MAX_JSON_DEPTH = 64;

/** How a body read ended. */
export type BodyRead =
  | { text: string }
  /** Larger than MAX_BODY_BYTES: the rest is discarded as it arrives, never buffered. */
  | { tooLarge: number }
  /** The body never finished: the episode ended, or the client closed the connection, mid-body. */
  | { cutOff: { bytes: number; reason: string } };

/**
 * Reads the whole body, unless it grows past the cap (`maxBytes`), the client goes away, or `cutoff` aborts
 * (its reason says why). Never throws.
 */
export function readBody(
  req: IncomingMessage,
  cutoff?: AbortSignal,
  maxBytes = MAX_BODY_BYTES,
): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (read: BodyRead) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
      cutoff?.removeEventListener('abort', onCut);
      resolve(read);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
      else {
        // Answer now; the rest of the body flows on unread until it ends (or the episode does).
        finish({ tooLarge: size });
        req.resume();
      }
    };
    const onEnd = () => finish({ text: Buffer.concat(chunks).toString('utf8') });
    const onGone = () => {
      if (req.complete) return onEnd();
      finish({ cutOff: { bytes: size, reason: 'the client closed the connection' } });
    };
    const onCut = () => finish({ cutOff: { bytes: size, reason: String(cutoff?.reason ?? 'cut off') } });
    if (cutoff?.aborted) return onCut();
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onGone);
    req.once('close', onGone);
    cutoff?.addEventListener('abort', onCut, { once: true });
  });
}

/**
 * The nesting depth of JSON text, counted on the raw characters (brackets outside strings), so a
 * 100,000-deep body is refused in one pass without building anything. Stops counting past `limit`.
 */
export function jsonDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > max) max = depth;
      if (max > limit) return max;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}
