// Reading what a model call used from its response as the bytes pass through the model gateway:
// each server-sent event's data of a stream, or the whole JSON body at its end (src/model/model-usage.ts).
import { addStreamed, type ModelApi, type ModelUsage, usageIn } from '../model/model-usage.js';

/** How much of a non-streamed response is kept to read its usage (the agent gets all of it). */
const MAX_USAGE_SCAN_BYTES = 8 * 1024 * 1024;

/** Watches a response's bytes: each server-sent event's data, or the whole JSON body at its end. */
export function usageReader(api: ModelApi, contentType: string) {
  const sse = contentType.includes('text/event-stream');
  let usage: ModelUsage | undefined;
  let model: string | undefined;
  let pending = '';
  const kept: Buffer[] = [];
  let keptBytes = 0;
  const decoder = new TextDecoder();
  const look = (value: unknown) => {
    const found = usageIn(api, value);
    if (found) usage = addStreamed(usage, found);
    const v = value as Record<string, unknown> | null;
    const named =
      v?.model ??
      (v?.message as Record<string, unknown> | undefined)?.model ??
      (v?.response as Record<string, unknown> | undefined)?.model;
    if (typeof named === 'string' && named !== '') model = named;
  };
  const line = (text: string) => {
    if (!text.startsWith('data:')) return;
    const data = text.slice(5).trim();
    if (data === '' || data === '[DONE]') return;
    const parsed = parseObject(data);
    if (parsed) look(parsed);
  };
  return {
    push(chunk: Buffer) {
      if (sse) {
        pending += decoder.decode(chunk, { stream: true });
        let nl = pending.indexOf('\n');
        while (nl >= 0) {
          line(pending.slice(0, nl).replace(/\r$/, ''));
          pending = pending.slice(nl + 1);
          nl = pending.indexOf('\n');
        }
      } else if (keptBytes <= MAX_USAGE_SCAN_BYTES) {
        kept.push(chunk);
        keptBytes += chunk.length;
      }
    },
    done(): { usage?: ModelUsage; model?: string } {
      if (sse) line(pending.replace(/\r$/, ''));
      else if (keptBytes <= MAX_USAGE_SCAN_BYTES) {
        const parsed = parseObject(Buffer.concat(kept).toString('utf8'));
        if (parsed) look(parsed);
      }
      return { usage, model };
    },
  };
}

/** The JSON object `text` holds, or undefined (not JSON, or not an object). */
export function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
