// A loopback server speaking the chat-completions format, for the judge's tests: each request's
// JSON body goes to `respond`, which writes the response.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ChatResponder = (
  body: Record<string, unknown>,
  req: IncomingMessage,
  res: ServerResponse,
) => void;

export interface ChatServer {
  /** The base URL, ending in /v1, as a `judge.url` gives it. */
  url: string;
  close(): Promise<void>;
}

/** A chat-completions body whose first choice says `content`. */
export function completion(content: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    choices: [{ index: 0, message: { role: 'assistant', content, ...extra }, finish_reason: 'stop' }],
  });
}

/** Writes a JSON response. */
export function answer(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
}

/** The text of the agent reply inside the judge's prompt (src/judge/prompt.ts). */
export function replyIn(body: Record<string, unknown>): string {
  const messages = body.messages as { content: string }[];
  return /Agent reply:\n<<<\n([\s\S]*)\n>>>/.exec(messages[1]?.content ?? '')?.[1] ?? '';
}

export async function startChatServer(respond: ChatResponder): Promise<ChatServer> {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => respond(JSON.parse(raw) as Record<string, unknown>, req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
