// What a model call used, as the provider reported it, and what it cost at the suite's prices.
// The model gateway (the agent's calls) and the harness's own callers (the user simulator, the
// judge) read usage and price it here, so one call costs the same whoever made it.

/** The provider APIs Stategate reads usage from. */
export type ModelApi = 'openai' | 'anthropic';

/** Tokens as the provider reported them; `cached_input_tokens` is part of `input_tokens`. */
export interface ModelUsage {
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
}

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  cached_input?: number;
}

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
const record = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/**
 * The usage in one response body (or one server-sent event's data) of `api`, or undefined when it
 * carries none. OpenAI: chat completions (`prompt_tokens`, `completion_tokens`,
 * `prompt_tokens_details.cached_tokens`) and responses (`input_tokens`, `output_tokens`,
 * `input_tokens_details.cached_tokens`; a stream's usage sits in `response.usage`). Anthropic: messages,
 * whose `input_tokens` excludes cache reads and writes, so they are added back.
 */
export function usageIn(api: ModelApi, body: unknown): ModelUsage | undefined {
  const b = record(body);
  if (!b) return undefined;
  if (api === 'anthropic') {
    // A stream reports input at message_start (message.usage) and output at message_delta (usage).
    const u = record(b.usage) ?? record(record(b.message)?.usage);
    if (!u) return undefined;
    const cached = count(u.cache_read_input_tokens);
    return {
      input_tokens: count(u.input_tokens) + cached + count(u.cache_creation_input_tokens),
      cached_input_tokens: cached,
      output_tokens: count(u.output_tokens),
    };
  }
  const u = record(b.usage) ?? record(record(b.response)?.usage);
  if (!u) return undefined;
  if ('prompt_tokens' in u || 'completion_tokens' in u)
    return {
      input_tokens: count(u.prompt_tokens),
      cached_input_tokens: count(record(u.prompt_tokens_details)?.cached_tokens),
      output_tokens: count(u.completion_tokens),
    };
  return {
    input_tokens: count(u.input_tokens),
    cached_input_tokens: count(record(u.input_tokens_details)?.cached_tokens),
    output_tokens: count(u.output_tokens),
  };
}

/**
 * Folds the usage of a stream's events: Anthropic reports input once and output at the end; OpenAI
 * reports the whole usage in one final chunk. Taking each field's largest value is right for both.
 */
export function addStreamed(sum: ModelUsage | undefined, next: ModelUsage): ModelUsage {
  if (!sum) return next;
  return {
    input_tokens: Math.max(sum.input_tokens, next.input_tokens),
    cached_input_tokens: Math.max(sum.cached_input_tokens, next.cached_input_tokens),
    output_tokens: Math.max(sum.output_tokens, next.output_tokens),
  };
}

const DATE_SUFFIX = /-(\d{4}-\d{2}-\d{2}|\d{8})$/;

/**
 * The cost in USD of `usage` at `prices[model]`, or undefined when the model has no price (an
 * unknown cost is never reported as free). A dated snapshot (`gpt-4.1-mini-2025-04-14`,
 * `claude-sonnet-4-20250514`) takes the price of the name before its date.
 */
export function costUsd(
  prices: Readonly<Record<string, ModelPrice>>,
  model: string,
  usage: ModelUsage,
): number | undefined {
  // hasOwn: a model named `constructor` or `__proto__` has no price.
  const name = Object.hasOwn(prices, model) ? model : model.replace(DATE_SUFFIX, '');
  if (!Object.hasOwn(prices, name)) return undefined;
  const price = prices[name];
  const cached = Math.min(usage.cached_input_tokens, usage.input_tokens);
  const usd =
    (usage.input_tokens - cached) * price.input +
    cached * (price.cached_input ?? price.input) +
    usage.output_tokens * price.output;
  return usd / 1_000_000;
}
