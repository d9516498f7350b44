// An OpenAI-compatible chat-completions client for the judge, on fetch. Any failure to get a
// verdict (down, slow, rate-limited, refusing, unparsable) is an error, never a score.
import type { JudgeResult } from '../expectations/kind.js';
import { type JudgeAnswer, type JudgeQuestion, judgeMessages, parseJudgeAnswer } from './prompt.js';

export interface JudgeClientOptions {
  /** The base URL; `/chat/completions` is appended unless the URL already ends with it. */
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
}

export type JudgeOutcome = { answer: JudgeAnswer } | { error: string };

function endpoint(url: string): string {
  const base = url.replace(/\/+$/, '');
  return base.endsWith('/chat/completions') ? base : `${base}/chat/completions`;
}

/** The text of the first choice, or why there is none (a refusal, a filtered answer, a bad body). */
function choiceText(body: unknown): { text: string } | { error: string } {
  const choice = (body as { choices?: unknown[] } | null)?.choices?.[0] as
    | { message?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown }
    | undefined;
  if (!choice?.message) return { error: 'the judge answered without a choice' };
  if (typeof choice.message.refusal === 'string' && choice.message.refusal !== '') {
    return { error: `the judge refused: ${choice.message.refusal.slice(0, 200)}` };
  }
  if (choice.finish_reason === 'content_filter') return { error: 'the judge refused: content_filter' };
  if (typeof choice.message.content !== 'string') return { error: 'the judge answered with no text' };
  return { text: choice.message.content };
}

/** Asks the judge one question; the answer, or an error saying why there is none. */
export async function askJudge(options: JudgeClientOptions, question: JudgeQuestion): Promise<JudgeOutcome> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  let response: Response;
  let body: unknown;
  try {
    response = await fetch(endpoint(options.url), {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: options.model, temperature: 0, messages: judgeMessages(question) }),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    if (response.status === 429) return { error: 'the judge is rate-limited (HTTP 429)' };
    if (!response.ok) return { error: `the judge answered HTTP ${response.status}` };
    body = await response.json();
  } catch (err) {
    const e = err as Error;
    if (e.name === 'TimeoutError') return { error: `the judge did not answer within ${options.timeoutMs}ms` };
    if (e instanceof SyntaxError) return { error: `the judge's response is not JSON: ${e.message}` };
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return { error: `the judge is unreachable: ${cause?.code ?? cause?.message ?? e.message}` };
  }
  const text = choiceText(body);
  if ('error' in text) return text;
  try {
    return { answer: parseJudgeAnswer(text.text, question.reply) };
  } catch (err) {
    return { error: `the judge's answer is unparsable: ${(err as Error).message}` };
  }
}

/** The grader's view of an outcome: pass needs label pass (the threshold is the grader's). */
export function toJudgeResult(outcome: JudgeOutcome): JudgeResult {
  if ('error' in outcome) return { error: outcome.error };
  const { answer } = outcome;
  const result: JudgeResult = { score: answer.score, pass: answer.label === 'pass' };
  if (answer.quote) result.reason = `"${answer.quote}"`;
  return result;
}
