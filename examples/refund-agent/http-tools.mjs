// The tool transport over the gateway's HTTP JSON API (GET $URL/tools, POST $URL/tools/NAME).
// Anything that is not a clean JSON reply (a dropped connection, a cut or invalid body) is a failed call.

/** @typedef {import('./planner.mjs').CallOutcome} CallOutcome */

// Statuses after which the same request may succeed later; anything else is a final answer.
const TRANSIENT = new Set([0, 408, 425, 429, 500, 502, 503, 504]);

/** A failed call, in the shape the planner reads. */
export function failedCall(status, code, message, retryAfterMs = null, retryable = TRANSIENT.has(status)) {
  return { ok: false, status, code, message, retryable, retryAfterMs };
}

/** Parses a Retry-After header given in seconds; dates and garbage count as absent. */
export function retryAfterMs(header) {
  if (header === null || header === undefined || !/^\d+(\.\d+)?$/.test(String(header).trim())) return null;
  return Math.round(Number(header) * 1000);
}

/** Returns a transport that calls the tools served at `toolsUrl`. */
export function httpTools(toolsUrl, { timeoutMs = 10_000 } = {}) {
  const base = toolsUrl.replace(/\/+$/, '');
  return {
    async listTools() {
      try {
        const res = await fetch(`${base}/tools`, { signal: AbortSignal.timeout(timeoutMs) });
        if (!res.ok) return null;
        const body = await res.json();
        return Array.isArray(body?.tools) ? body.tools.map((t) => t.name) : null;
      } catch {
        return null;
      }
    },

    /** @returns {Promise<CallOutcome>} */
    async call(name, args) {
      let res;
      let text;
      try {
        res = await fetch(`${base}/tools/${encodeURIComponent(name)}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(args),
          signal: AbortSignal.timeout(timeoutMs),
        });
        text = await res.text();
      } catch (err) {
        return failedCall(
          res?.status ?? 0,
          'CONNECTION_FAILED',
          `${err.cause?.code ?? err.name}: ${err.message}`,
        );
      }
      const wait = retryAfterMs(res.headers.get('retry-after'));
      let body;
      try {
        body = JSON.parse(text);
      } catch {
        // A 2xx with a broken body may still have done its work: say so by making it retryable.
        return failedCall(
          res.status,
          'INVALID_RESPONSE',
          `unparsable reply: ${text.slice(0, 80)}`,
          wait,
          true,
        );
      }
      if (res.ok) {
        if (body && typeof body === 'object' && 'result' in body)
          return { ok: true, status: res.status, result: body.result };
        return failedCall(res.status, 'INVALID_RESPONSE', 'reply without a result field', wait, true);
      }
      const error = body?.error ?? {};
      return failedCall(
        res.status,
        String(error.code ?? `HTTP_${res.status}`),
        String(error.message ?? ''),
        wait,
      );
    },
  };
}
