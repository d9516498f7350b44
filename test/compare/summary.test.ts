import { describe, expect, it } from 'vitest';
import { summarizeSide } from '../../src/compare/summary.js';
import type { GradedEpisode, ModelCallRecord } from '../../src/model/episode.js';
import { call, episode, scenario } from './builders.js';

/** A model call as the gateway records it, priced `costUsd` (null: the model has no price). */
function modelCall(
  costUsd: number | null,
  usage = { input_tokens: 1000, cached_input_tokens: 0, output_tokens: 100 },
): ModelCallRecord {
  return {
    seq: 1,
    provider: 'openai',
    path: '/chat/completions',
    model: 'gpt-4.1-mini',
    stream: false,
    status: 200,
    startedAt: '2026-12-03T10:00:00.000Z',
    latencyMs: 12,
    usage,
    costUsd,
  };
}

function withModelCalls(e: GradedEpisode, calls: ModelCallRecord[]): GradedEpisode {
  return { ...e, record: { ...e.record, modelCalls: calls } };
}

const s = scenario('refund', [
  { id: 'refunded-once', critical: true },
  { id: 'polite-reply', critical: false },
]);

describe('summarizeSide', () => {
  it('counts every expectation per verdict, with labels and one failure message', () => {
    const episodes = [
      episode(s, 'head', 1, {
        calls: [call('lookup_order'), call('refund_payment', {}, { mutated: true })],
        durationMs: 800,
        usage: { input_tokens: 100, output_tokens: 10, cost_usd: 0.1 },
      }),
      episode(s, 'head', 2, {
        verdicts: { 'refunded-once': 'fail' },
        labels: { 'refunded-once': 'DUPLICATE_EFFECT' },
        messages: { 'refunded-once': 'expected 1, got 2' },
        calls: [call('lookup_order')],
        durationMs: 1200,
        usage: { input_tokens: 50, output_tokens: 5, cost_usd: 0.2 },
      }),
      episode(s, 'head', 3, {
        verdicts: { 'refunded-once': 'fail', 'polite-reply': 'error' },
        messages: { 'refunded-once': 'expected 1, got 0' },
        calls: [],
        durationMs: 5000,
      }),
    ];
    const sum = summarizeSide(s, episodes);
    expect(sum.runs).toBe(3);
    expect(sum.passes).toBe(1);
    expect(sum.infraErrors).toBe(1); // the episode whose polite-reply could not be evaluated
    expect(Object.keys(sum.expectations)).toEqual(['completed', 'refunded-once', 'polite-reply']);
    expect(sum.expectations.completed).toEqual({ pass: 3, fail: 0, error: 0, critical: true });
    expect(sum.expectations['refunded-once']).toEqual({
      pass: 1,
      fail: 2,
      error: 0,
      critical: true,
      labels: { DUPLICATE_EFFECT: 1, STATE_MISMATCH: 1 },
      example: 'expected 1, got 2',
    });
    expect(sum.expectations['polite-reply']).toMatchObject({
      pass: 2,
      fail: 0,
      error: 1,
      critical: false,
      labels: { EVALUATION_ERROR: 1 },
    });
    expect(sum.metrics).toEqual({
      toolCalls: 1,
      latencyMs: 1200,
      costUsd: 0.3,
      inputTokens: 150,
      outputTokens: 15,
      // Nothing went through the model gateway: the numbers are the agent's word, labelled so.
      claimed: true,
    });
    expect(sum.episodes).toEqual(['refund-head-1', 'refund-head-2', 'refund-head-3']);
    expect(sum.stats).toMatchObject({ n: 2, c: 1, pass_rate: 0.5, all_n: false });
  });

  it('orders episodes by repeat and takes the median latency of an even count as the middle mean', () => {
    const episodes = [4, 1, 3, 2].map((r) => episode(s, 'base', r, { durationMs: r * 100 }));
    const sum = summarizeSide(s, episodes);
    expect(sum.episodes).toEqual(['refund-base-1', 'refund-base-2', 'refund-base-3', 'refund-base-4']);
    expect(sum.metrics?.latencyMs).toBe(250);
    expect(sum.stats?.all_n).toBe(true);
  });

  it('leaves episodes stopped by an infrastructure error out of the metrics', () => {
    const sum = summarizeSide(s, [
      episode(s, 'head', 1, { durationMs: 900, calls: [call('a'), call('b')] }),
      episode(s, 'head', 2, { durationMs: 0, infraError: { stage: 'sandbox', message: 'clone failed' } }),
    ]);
    expect(sum.metrics).toMatchObject({ toolCalls: 2, latencyMs: 900 });
    expect(sum.infraErrors).toBe(1);
    expect(sum.passes).toBe(1);
  });

  it('summarises zero episodes as zero runs with every expectation listed', () => {
    const sum = summarizeSide(s, []);
    expect(sum.runs).toBe(0);
    expect(sum.metrics).toBeUndefined();
    expect(sum.expectations['refunded-once']).toEqual({ pass: 0, fail: 0, error: 0, critical: true });
  });
});

describe('cost and tokens come from the records', () => {
  it('an agent that claims $999 costs what its recorded model calls cost', () => {
    const claim = { input_tokens: 5, output_tokens: 5, cost_usd: 999 };
    const episodes = [
      withModelCalls(episode(s, 'head', 1, { usage: claim }), [modelCall(0.002), modelCall(0.001)]),
      withModelCalls(episode(s, 'head', 2, { usage: claim }), []),
    ];
    const sum = summarizeSide(s, episodes);
    expect(sum.metrics).toMatchObject({
      costUsd: 0.003,
      inputTokens: 2000,
      outputTokens: 200,
      modelCalls: 2,
    });
    expect(sum.metrics?.claimed).toBeUndefined();
    expect(sum.cost?.total_usd).toBe(0.003);
  });

  it('a recorded call without a price leaves the cost unknown, never free, and never the claim', () => {
    const episodes = [withModelCalls(episode(s, 'head', 1, { usage: { cost_usd: 999 } }), [modelCall(null)])];
    const sum = summarizeSide(s, episodes);
    expect(sum.metrics).toMatchObject({ costUnreported: true, inputTokens: 1000 });
    expect(sum.cost).toBeUndefined();
  });
});
