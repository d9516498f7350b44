// The judge's prompt, and the reading of its answer: a label, a score and a quote from the reply.

/** What the judge is asked about one `judge` expectation. */
export interface JudgeQuestion {
  criterion: string;
  /** The user's message the agent answered. */
  message: string;
  /** The agent's reply, the only text the judge grades. */
  reply: string;
}

/** What the judge said, read and checked. */
export interface JudgeAnswer {
  label: 'pass' | 'fail';
  score: number;
  /** A verbatim quote from the reply backing the label; absent when none was given or it was dropped. */
  quote?: string;
  /** The judge quoted text that is not in the reply, so the quote was dropped. */
  quoteDropped: boolean;
}

const SYSTEM = [
  'You grade one reply of an AI agent against one criterion.',
  'Answer with a single JSON object and nothing else:',
  '{"label": "pass" or "fail", "score": a number from 0 to 1, "quote": the exact words of the reply that decide it}',
  'The quote must be copied verbatim from the reply; use "" when no words of the reply apply.',
].join('\n');

/** The chat messages that ask the judge one question. */
export function judgeMessages(q: JudgeQuestion): { role: 'system' | 'user'; content: string }[] {
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: `Criterion: ${q.criterion}\n\nUser message:\n<<<\n${q.message}\n>>>\n\nAgent reply:\n<<<\n${q.reply}\n>>>`,
    },
  ];
}

/** The JSON object in a model's text: the whole text, or the first {...} in it (models add fences). */
function jsonObject(text: string): unknown {
  const trimmed = text.trim();
  try {
    return JSON.parse(trimmed);
  } catch {
    const start = trimmed.indexOf('{');
    const end = trimmed.lastIndexOf('}');
    if (start < 0 || end <= start) throw new Error('no JSON object in the answer');
    return JSON.parse(trimmed.slice(start, end + 1));
  }
}

/** Reads the judge's text into an answer; throws a message saying what was wrong with it. */
export function parseJudgeAnswer(text: string, reply: string): JudgeAnswer {
  let value: unknown;
  try {
    value = jsonObject(text);
  } catch (err) {
    throw new Error(`${(err as Error).message}: ${JSON.stringify(text.slice(0, 200))}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`expected a JSON object, got ${JSON.stringify(value)}`);
  }
  const { label, score, quote } = value as Record<string, unknown>;
  if (label !== 'pass' && label !== 'fail')
    throw new Error(`label must be "pass" or "fail", got ${JSON.stringify(label)}`);
  if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) {
    throw new Error(`score must be a number from 0 to 1, got ${JSON.stringify(score)}`);
  }
  const answer: JudgeAnswer = { label, score, quoteDropped: false };
  if (typeof quote === 'string' && quote.trim() !== '') {
    // A quote the reply does not contain is the judge's invention: it backs nothing.
    if (reply.includes(quote)) answer.quote = quote;
    else answer.quoteDropped = true;
  }
  return answer;
}
