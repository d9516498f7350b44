// Usage as each provider reports it, and its price: the gateway, the user simulator and the judge
// all read it here.
import { describe, expect, it } from 'vitest';
import { addStreamed, costUsd, usageIn } from '../../src/model/model-usage.js';

describe('usageIn', () => {
  it('reads OpenAI chat completions, responses and a responses stream event', () => {
    expect(
      usageIn('openai', {
        usage: { prompt_tokens: 100, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 40 } },
      }),
    ).toEqual({ input_tokens: 100, cached_input_tokens: 40, output_tokens: 20 });
    expect(usageIn('openai', { usage: { input_tokens: 7, output_tokens: 3 } })).toEqual({
      input_tokens: 7,
      cached_input_tokens: 0,
      output_tokens: 3,
    });
    expect(
      usageIn('openai', {
        type: 'response.completed',
        response: { usage: { input_tokens: 5, output_tokens: 1 } },
      }),
    ).toEqual({ input_tokens: 5, cached_input_tokens: 0, output_tokens: 1 });
    expect(usageIn('openai', { choices: [] })).toBeUndefined();
    expect(usageIn('openai', 'text')).toBeUndefined();
  });

  it('adds Anthropic cache reads and writes back into input, and folds a stream', () => {
    const start = usageIn('anthropic', {
      type: 'message_start',
      message: {
        usage: {
          input_tokens: 10,
          cache_read_input_tokens: 90,
          cache_creation_input_tokens: 5,
          output_tokens: 1,
        },
      },
    });
    expect(start).toEqual({ input_tokens: 105, cached_input_tokens: 90, output_tokens: 1 });
    const delta = usageIn('anthropic', { type: 'message_delta', usage: { output_tokens: 42 } })!;
    expect(addStreamed(start, delta)).toEqual({
      input_tokens: 105,
      cached_input_tokens: 90,
      output_tokens: 42,
    });
  });
});

describe('costUsd', () => {
  const prices = {
    'gpt-4.1-mini': { input: 0.4, output: 1.6, cached_input: 0.1 },
    'gpt-4.1': { input: 2, output: 8 },
  };
  it('prices cached input apart, and a dated model by the longest listed prefix', () => {
    const usage = { input_tokens: 1_000_000, cached_input_tokens: 500_000, output_tokens: 1_000_000 };
    expect(costUsd(prices, 'gpt-4.1-mini', usage)).toBeCloseTo(0.2 + 0.05 + 1.6, 10);
    expect(costUsd(prices, 'gpt-4.1-mini-2025-04-14', usage)).toBeCloseTo(1.85, 10);
    expect(costUsd(prices, 'gpt-4.1-2025-04-14', usage)).toBeCloseTo(1 + 1 + 8, 10);
  });
  it('says unknown, never free, for a model without a price', () => {
    expect(
      costUsd(prices, 'o3', { input_tokens: 1, cached_input_tokens: 0, output_tokens: 1 }),
    ).toBeUndefined();
    expect(
      costUsd(prices, 'gpt-4.1-minix', { input_tokens: 1, cached_input_tokens: 0, output_tokens: 1 }),
    ).toBeUndefined();
  });
});

describe('costUsd on names that are not models', () => {
  it('gives no price to constructor or __proto__', () => {
    const u = { input_tokens: 1, cached_input_tokens: 0, output_tokens: 1 };
    expect(costUsd({ m: { input: 1, output: 1 } }, 'constructor', u)).toBeUndefined();
    expect(costUsd({ m: { input: 1, output: 1 } }, '__proto__', u)).toBeUndefined();
    expect(
      costUsd({ 'claude-sonnet-4': { input: 3, output: 15 } }, 'claude-sonnet-4-20250514', u),
    ).toBeCloseTo(18e-6, 12);
  });
});
