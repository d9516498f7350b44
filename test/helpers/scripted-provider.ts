// NOT A MODEL. A loopback HTTP server that speaks the OpenAI chat-completions and the Anthropic
// messages wire formats (with and without server-sent-event streams) and answers from a script:
// the same request always gets the same bytes. It keeps every request it received (headers and
// body), so a test can assert what crossed the wire on the provider's side of the model gateway.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the scripted provider received it. */
export interface ProviderRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown> | null;
  raw: string;
}

export interface ScriptedProvider {
  /** The base URL ending in /v1, as `models.*.url` gives it. */
  url: string;
  requests: ProviderRequest[];
  close(): Promise<void>;
}

/** The usage the script reports for every answer (so a test can compute the expected cost by hand). */
export const SCRIPTED_USAGE = { input: 1200, cached: 200, output: 300 } as const;
/** The model name the script reports back: a dated snapshot of what was asked. */
export const scriptedModel = (asked: unknown) =>
  `${typeof asked === 'string' ? asked : 'unnamed'}-2025-04-14`;

/** The scripted reply text: says it is a script and echoes the last user message. */
export function scriptedText(body: Record<string, unknown> | null): string {
  const messages = (body?.messages as { role: string; content: unknown }[] | undefined) ?? [];
  const last = [...messages].reverse().find((m) => m.role === 'user');
  const content = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
  return `scripted reply to: ${content}`;
}

function sse(events: unknown[], named?: string[]): string {
  return events
    .map((e, i) =>
      named ? `event: ${named[i]}\ndata: ${JSON.stringify(e)}\n\n` : `data: ${JSON.stringify(e)}\n\n`,
    )
    .join('');
}

function openaiAnswer(body: Record<string, unknown> | null): { type: string; text: string } {
  const model = scriptedModel(body?.model);
  const text = scriptedText(body);
  const usage = {
    prompt_tokens: SCRIPTED_USAGE.input,
    completion_tokens: SCRIPTED_USAGE.output,
    total_tokens: SCRIPTED_USAGE.input + SCRIPTED_USAGE.output,
    prompt_tokens_details: { cached_tokens: SCRIPTED_USAGE.cached },
  };
  const base = { id: 'chatcmpl-scripted', created: 1_700_000_000, model };
  if (body?.stream !== true)
    return {
      type: 'application/json',
      text: JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        usage,
      }),
    };
  const chunk = (delta: unknown, finish: string | null) => ({
    ...base,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const half = Math.floor(text.length / 2);
  const events: unknown[] = [
    chunk({ role: 'assistant', content: '' }, null),
    chunk({ content: text.slice(0, half) }, null),
    chunk({ content: text.slice(half) }, null),
    chunk({}, 'stop'),
  ];
  const options = body.stream_options as { include_usage?: boolean } | undefined;
  // As OpenAI does: usage only when asked for, in a last chunk with no choices.
  if (options?.include_usage) events.push({ ...base, object: 'chat.completion.chunk', choices: [], usage });
  return { type: 'text/event-stream', text: `${sse(events)}data: [DONE]\n\n` };
}

function anthropicAnswer(body: Record<string, unknown> | null): { type: string; text: string } {
  const model = scriptedModel(body?.model);
  const text = scriptedText(body);
  // Anthropic's input_tokens exclude cache reads, which are reported beside them.
  const usage = {
    input_tokens: SCRIPTED_USAGE.input - SCRIPTED_USAGE.cached,
    cache_read_input_tokens: SCRIPTED_USAGE.cached,
    cache_creation_input_tokens: 0,
    output_tokens: SCRIPTED_USAGE.output,
  };
  if (body?.stream !== true)
    return {
      type: 'application/json',
      text: JSON.stringify({
        id: 'msg_scripted',
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage,
      }),
    };
  const names = [
    'message_start',
    'content_block_start',
    'content_block_delta',
    'content_block_stop',
    'message_delta',
    'message_stop',
  ];
  const events = [
    {
      type: 'message_start',
      message: {
        id: 'msg_scripted',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
    { type: 'content_block_stop', index: 0 },
    {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: SCRIPTED_USAGE.output },
    },
    { type: 'message_stop' },
  ];
  return { type: 'text/event-stream', text: sse(events, names) };
}

/**
 * Starts the scripted provider on loopback. `pauseMs` holds each streamed answer between its first
 * and its second half, so a test can see the first bytes arrive before the last are written.
 */
export async function startScriptedProvider(opts: { pauseMs?: number } = {}): Promise<ScriptedProvider> {
  const requests: ProviderRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> | null = null;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {}
      const path = (req.url ?? '/').split('?')[0];
      requests.push({ method: req.method ?? '?', path, headers: req.headers, body, raw });
      const answer =
        path === '/v1/chat/completions'
          ? openaiAnswer(body)
          : path === '/v1/messages'
            ? anthropicAnswer(body)
            : null;
      if (!answer) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({ error: { message: `scripted provider: no route ${path}`, type: 'not_found' } }),
        );
      }
      res.writeHead(200, { 'content-type': answer.type, 'x-scripted-provider': 'not-a-model' });
      if (answer.type !== 'text/event-stream' || !opts.pauseMs) return res.end(answer.text);
      const cut = answer.text.indexOf('\n\n') + 2;
      res.write(answer.text.slice(0, cut));
      setTimeout(() => res.end(answer.text.slice(cut)), opts.pauseMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
