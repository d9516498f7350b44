// The one content hash: sha256 of the canonical JSON of a value. The pin, the template and the
// baseline cache's keys all hash with it, so the same content has the same hash wherever it is taken.
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/** sha256 of a text, as lowercase hex. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** sha256 of a value's canonical JSON: key order and formatting do not change it. */
export function contentHash(value: unknown): string {
  return sha256(canonicalJson(value));
}
