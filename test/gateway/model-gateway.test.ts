// The model gateway over real HTTP, between the official OpenAI SDK (or plain fetch for Anthropic's
// wire format) and a scripted provider that is not a model: what crossed the wire on each side
// (the episode's key on the agent's side only, the real key on the provider's side only), responses
// passed through unchanged (streams included), usage read, cost priced, keys checked, budget enforced.
import { request as httpRequest } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WRONG_KEYS_KEPT } from '../../src/gateway/model-session.js';
import type { ModelSpec } from '../../src/gateway/types.js';
import { costUsd } from '../../src/model/model-usage.js';
import {
  SCRIPTED_USAGE,
  type ScriptedProvider,
  scriptedModel,
  startScriptedProvider,
} from '../helpers/scripted-provider.js';
import { type Episode, openShop, type Shop } from './fixture.js';

const REAL_OPENAI_KEY = 'sk-real-openai-key-held-by-the-harness-0123456789';
const REAL_ANTHROPIC_KEY = 'sk-ant-real-anthropic-key-held-by-the-harness-0123456789';
const PRICES = { 'gpt-4.1-mini': { input: 0.4, output: 1.6, cached_input: 0.1 } };
const CLAUDE_PRICES = { 'claude-sonnet-4': { input: 3, output: 15, cached_input: 0.3 } };
// By hand: (1200 - 200) * 0.40 + 200 * 0.10 + 300 * 1.60 = 400 + 20 + 480 = 900 per million.
const OPENAI_CALL_USD = 900 / 1_000_000;
// (1000 * 3 + 200 * 0.3 + 300 * 15) / 1e6 = (3000 + 60 + 4500) / 1e6
const ANTHROPIC_CALL_USD = 7560 / 1_000_000;

let shop: Shop;
let provider: ScriptedProvider;
beforeAll(async () => {
  [shop, provider] = await Promise.all([openShop(), startScriptedProvider()]);
}, 300_000);
afterAll(async () => {
  await shop?.close();
  await provider?.close();
}, 300_000);

function models(extra: Partial<ModelSpec> = {}): ModelSpec {
  return {
    providers: {
      openai: { api: 'openai', url: provider.url, key: REAL_OPENAI_KEY, prices: PRICES },
      claude: { api: 'anthropic', url: provider.url, key: REAL_ANTHROPIC_KEY, prices: CLAUDE_PRICES },
    },
    ...extra,
  };
}

function sdk(ep: Episode, opts: { maxRetries?: number } = {}): OpenAI {
  return new OpenAI({
    baseURL: ep.session.modelEnv.OPENAI_BASE_URL,
    apiKey: ep.session.modelEnv.OPENAI_API_KEY,
    maxRetries: opts.maxRetries ?? 0,
  });
}

async function anthropic(
  ep: Episode,
  body: Record<string, unknown>,
  key = ep.session.modelEnv.ANTHROPIC_API_KEY,
) {
  return fetch(`${ep.session.modelEnv.ANTHROPIC_BASE_URL}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
}

const since = (n: number) => provider.requests.slice(n);

describe("the agent gets an episode key and base URLs in the SDKs' own variables", () => {
  it('sets OPENAI_* and ANTHROPIC_* on the gateway, never the real keys', async () => {
    const ep = await shop.episode({ models: models() });
    const env = ep.session.modelEnv;
    expect(Object.keys(env).sort()).toEqual([
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_BASE_URL',
      'OPENAI_API_KEY',
      'OPENAI_BASE_URL',
    ]);
    expect(env.OPENAI_BASE_URL).toBe(`${ep.session.toolsUrl.replace('/e/', '/m/')}/openai/v1`);
    expect(env.ANTHROPIC_BASE_URL).toBe(`${ep.session.toolsUrl.replace('/e/', '/m/')}/claude`);
    expect(env.OPENAI_API_KEY).toMatch(/^sg-episode-[0-9a-f]{48}$/);
    expect(JSON.stringify(env)).not.toContain(REAL_OPENAI_KEY);
    expect(JSON.stringify(env)).not.toContain(REAL_ANTHROPIC_KEY);
  });

  it('env: {url, key} renames the variables', async () => {
    const spec = models();
    const ep = await shop.episode({
      models: {
        providers: {
          ...spec.providers,
          claude: { ...spec.providers.claude, env: { url: 'LLM_URL', key: 'LLM_KEY' } },
        },
      },
    });
    expect(ep.session.modelEnv.LLM_URL).toMatch(/\/m\/[0-9a-f]+\/claude$/);
    expect(ep.session.modelEnv.ANTHROPIC_BASE_URL).toBeUndefined();
  });

  it('refuses two providers that would set the same variable', async () => {
    const spec = models();
    await expect(
      shop.episode({ models: { providers: { a: spec.providers.openai, b: spec.providers.openai } } }),
    ).rejects.toThrow(/models.a and models.b both set OPENAI_BASE_URL/);
  });
});

describe('OpenAI chat completions through the official SDK', () => {
  it('without a stream: the provider sees the real key, the agent the response unchanged, the record the usage', async () => {
    const ep = await shop.episode({ models: models() });
    const before = provider.requests.length;
    const reply = await sdk(ep).chat.completions.create({
      model: 'gpt-4.1-mini',
      messages: [{ role: 'user', content: 'refund ORD-1' }],
    });
    expect(reply.choices[0].message.content).toBe('scripted reply to: refund ORD-1');
    expect(reply.usage?.prompt_tokens).toBe(SCRIPTED_USAGE.input);
    const [seen] = since(before);
    expect(seen.path).toBe('/v1/chat/completions');
    expect(seen.headers.authorization).toBe(`Bearer ${REAL_OPENAI_KEY}`);
    expect(JSON.stringify(seen.headers)).not.toContain(ep.session.modelEnv.OPENAI_API_KEY);
    expect(seen.body).toEqual({
      model: 'gpt-4.1-mini',
      messages: [{ role: 'user', content: 'refund ORD-1' }],
    });
    const [call] = ep.session.modelCalls();
    expect(call).toMatchObject({
      seq: 1,
      provider: 'openai',
      path: '/chat/completions',
      model: scriptedModel('gpt-4.1-mini'),
      stream: false,
      status: 200,
      usage: { input_tokens: 1200, cached_input_tokens: 200, output_tokens: 300 },
    });
    expect(call.costUsd).toBeCloseTo(OPENAI_CALL_USD, 12);
    expect(call.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('with a stream: the gateway asks for usage, the SDK reads every chunk, the record has the usage', async () => {
    const ep = await shop.episode({ models: models() });
    const before = provider.requests.length;
    const stream = await sdk(ep).chat.completions.create({
      model: 'gpt-4.1-mini',
      messages: [{ role: 'user', content: 'stream it' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('scripted reply to: stream it');
    const [seen] = since(before);
    expect(seen.body?.stream_options).toEqual({ include_usage: true });
    const [call] = ep.session.modelCalls();
    expect(call).toMatchObject({
      stream: true,
      status: 200,
      usage: { input_tokens: 1200, output_tokens: 300 },
    });
    expect(call.costUsd).toBeCloseTo(OPENAI_CALL_USD, 12);
    expect(call.firstByteMs).toBeLessThanOrEqual(call.latencyMs);
  });

  it('a stream that already asks for usage is forwarded byte for byte', async () => {
    const ep = await shop.episode({ models: models() });
    const before = provider.requests.length;
    const raw = JSON.stringify({
      model: 'gpt-4.1-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'as is' }],
    });
    const res = await fetch(`${ep.session.modelEnv.OPENAI_BASE_URL}/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ep.session.modelEnv.OPENAI_API_KEY}`,
        'content-type': 'application/json',
      },
      body: raw,
    });
    const text = await res.text();
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('x-scripted-provider')).toBe('not-a-model');
    expect(since(before)[0].raw).toBe(raw);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });
});

describe('Anthropic messages over plain HTTP', () => {
  for (const stream of [false, true]) {
    it(`${stream ? 'with' : 'without'} a stream: x-api-key replaced, usage with cache reads added back`, async () => {
      const ep = await shop.episode({ models: models() });
      const before = provider.requests.length;
      const body = {
        model: 'claude-sonnet-4',
        max_tokens: 64,
        stream,
        messages: [{ role: 'user', content: 'hi' }],
      };
      const res = await anthropic(ep, body);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('scripted reply to: hi');
      const [seen] = since(before);
      expect(seen.headers['x-api-key']).toBe(REAL_ANTHROPIC_KEY);
      expect(seen.headers['anthropic-version']).toBe('2023-06-01');
      expect(seen.headers.authorization).toBeUndefined();
      expect(seen.body).toEqual(body);
      const [call] = ep.session.modelCalls();
      expect(call).toMatchObject({
        provider: 'claude',
        path: '/messages',
        stream,
        usage: { input_tokens: 1200, cached_input_tokens: 200, output_tokens: 300 },
      });
      expect(call.costUsd).toBeCloseTo(ANTHROPIC_CALL_USD, 12);
      expect(costUsd(CLAUDE_PRICES, call.model!, call.usage!)).toBeCloseTo(ANTHROPIC_CALL_USD, 12);
    });
  }
});

describe("keys: only this episode's key opens this episode's models", () => {
  it("another episode's key, a guessed key and the real key are refused with 401 and never forwarded", async () => {
    const ep = await shop.episode({ models: models() });
    const other = await shop.episode({ models: models() });
    const before = provider.requests.length;
    for (const key of [other.session.modelEnv.OPENAI_API_KEY, 'sg-episode-guess', REAL_OPENAI_KEY]) {
      await expect(
        new OpenAI({
          baseURL: ep.session.modelEnv.OPENAI_BASE_URL,
          apiKey: key,
          maxRetries: 0,
        }).chat.completions.create({
          model: 'gpt-4.1-mini',
          messages: [{ role: 'user', content: 'x' }],
        }),
      ).rejects.toMatchObject({ status: 401 });
    }
    const res = await anthropic(
      ep,
      { model: 'claude-sonnet-4', messages: [] },
      other.session.modelEnv.ANTHROPIC_API_KEY,
    );
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: 'This key is not valid for this episode.' },
    });
    expect(since(before)).toEqual([]);
    expect(ep.session.modelCalls().map((c) => [c.status, c.fault])).toEqual(
      Array(4).fill([401, 'wrong_key']),
    );
  });

  it('an agent that keeps guessing keys is refused every time and grows its record only so far', async () => {
    const ep = await shop.episode({ models: models() });
    const before = provider.requests.length;
    const statuses = new Set<number>();
    for (let i = 0; i < WRONG_KEYS_KEPT + 20; i++) {
      const res = await fetch(`${ep.session.modelEnv.OPENAI_BASE_URL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer sg-episode-guess-${i}`, 'content-type': 'application/json' },
        body: '{"model":"gpt-4.1-mini","messages":[]}',
      });
      statuses.add(res.status);
      await res.arrayBuffer();
    }
    expect([...statuses]).toEqual([401]);
    expect(since(before)).toEqual([]);
    expect(ep.session.modelCalls()).toHaveLength(WRONG_KEYS_KEPT);
  });

  it('a closed episode and an unknown token get the same 404 as any unknown URL', async () => {
    const ep = await shop.episode({ models: models() });
    const url = ep.session.modelEnv.OPENAI_BASE_URL;
    await ep.session.close();
    const closed = await fetch(`${url}/chat/completions`, { method: 'POST', body: '{}' });
    const unknown = await fetch(`${url.replace(/\/m\/[0-9a-f]+\//, '/m/0000/')}/chat/completions`, {
      method: 'POST',
      body: '{}',
    });
    expect([closed.status, unknown.status]).toEqual([404, 404]);
    expect(await closed.text()).toBe(await unknown.text());
  });
});

describe('budget.episode_usd', () => {
  it('past it the next call gets 429 budget_exceeded, recorded, and the provider is not called', async () => {
    const spent: number[] = [];
    // Two calls cost 1,800 per million: past 0.0015 after the second.
    const ep = await shop.episode({
      models: models({ episodeUsd: 0.0015, onSpend: (usd) => spent.push(usd) }),
    });
    const client = sdk(ep);
    const ask = () =>
      client.chat.completions.create({ model: 'gpt-4.1-mini', messages: [{ role: 'user', content: 'x' }] });
    await ask();
    await ask();
    const before = provider.requests.length;
    const err = await ask().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
    expect((err as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ type: 'budget_exceeded' });
    expect(since(before)).toEqual([]);
    expect(ep.session.modelCalls().map((c) => c.fault ?? c.status)).toEqual([200, 200, 'budget_exceeded']);
    expect(spent.reduce((a, b) => a + b, 0)).toBeCloseTo(2 * OPENAI_CALL_USD, 12);
  });
});

describe('model faults: what the provider did, as the agent sees it', () => {
  const ask = (ep: Episode) =>
    fetch(`${ep.session.modelEnv.OPENAI_BASE_URL}/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ep.session.modelEnv.OPENAI_API_KEY}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ model: 'gpt-4.1-mini', messages: [{ role: 'user', content: 'x' }] }),
    });
  const faulted = (fault: string, extra: Record<string, unknown> = {}) =>
    shop.episode({
      models: models({ faults: [{ model: 'openai', when: { call: 1 }, fault, ...extra } as never] }),
    });

  const errors: [string, number, string, string | null][] = [
    ['rate_limited', 429, 'rate_limit_exceeded', '1'],
    ['server_error', 500, 'server_error', null],
    ['unavailable', 503, 'service_unavailable', '1'],
  ];
  for (const [fault, status, type, retryAfter] of errors) {
    it(`${fault}: not forwarded, ${status} ${type} in OpenAI's shape; the next call goes through`, async () => {
      const ep = await faulted(fault);
      const before = provider.requests.length;
      const res = await ask(ep);
      expect(res.status).toBe(status);
      expect(res.headers.get('retry-after')).toBe(retryAfter);
      expect(((await res.json()) as { error: { type: string } }).error.type).toBe(type);
      expect(since(before)).toEqual([]);
      expect((await ask(ep)).status).toBe(200);
      expect(ep.session.modelCalls().map((c) => [c.status, c.fault])).toEqual([
        [status, fault],
        [200, undefined],
      ]);
      // Nothing was spent on the faulted call.
      expect(ep.session.modelCalls()[0]).toMatchObject({ usage: null, costUsd: null });
    });
  }

  it('timeout: held for delay_ms, then 504, not forwarded', async () => {
    const ep = await faulted('timeout', { delay_ms: 50 });
    const before = provider.requests.length;
    const res = await ask(ep);
    expect(res.status).toBe(504);
    expect(since(before)).toEqual([]);
    expect(ep.session.modelCalls()[0].latencyMs).toBeGreaterThanOrEqual(50);
  });

  it('dropped_connection: the socket closes with no reply, recorded with status 0', async () => {
    const ep = await faulted('dropped_connection');
    await expect(ask(ep)).rejects.toThrow();
    expect(ep.session.modelCalls()[0]).toMatchObject({ status: 0, fault: 'dropped_connection' });
  });

  it('malformed_json: 200 with a body that does not parse; the SDK raises', async () => {
    const ep = await faulted('malformed_json');
    const res = await ask(ep);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(() => JSON.parse(text)).toThrow();
    const again = await faulted('malformed_json');
    await expect(
      sdk(again).chat.completions.create({
        model: 'gpt-4.1-mini',
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toThrow();
  });

  it('delay: the call is forwarded after delay_ms and answered normally', async () => {
    const ep = await faulted('delay', { delay_ms: 80 });
    const before = provider.requests.length;
    const res = await ask(ep);
    expect(res.status).toBe(200);
    expect(since(before)).toHaveLength(1);
    const [call] = ep.session.modelCalls();
    expect(call).toMatchObject({ fault: 'delay', status: 200, usage: { output_tokens: 300 } });
    expect(call.latencyMs).toBeGreaterThanOrEqual(80);
  });

  it("a fault on another provider leaves this one's calls alone", async () => {
    const ep = await shop.episode({
      models: models({
        faults: [{ model: 'claude', when: { every: true }, fault: 'server_error' } as never],
      }),
    });
    expect((await ask(ep)).status).toBe(200);
  });
});

describe('a provider that cannot be reached', () => {
  it('gets 502 in the provider shape, recorded with the error (the episode is then not graded)', async () => {
    const spec = models();
    const ep = await shop.episode({
      models: { providers: { openai: { ...spec.providers.openai, url: 'http://127.0.0.1:1/v1' } } },
    });
    const res = await fetch(`${ep.session.modelEnv.OPENAI_BASE_URL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ep.session.modelEnv.OPENAI_API_KEY}` },
      body: '{}',
    });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('gateway_error');
    expect(ep.session.modelCalls()[0]).toMatchObject({ status: 502, unreachable: true });
    expect(ep.session.modelCalls()[0].error).toMatch(/could not be reached/);
  });
});

describe('paths stay under the provider base', () => {
  it('a dot segment (plain or encoded) is refused and never forwarded with the real key', async () => {
    const ep = await shop.episode({ models: models() });
    const before = provider.requests.length;
    const base = ep.session.modelEnv.OPENAI_BASE_URL;
    for (const rest of ['/../admin', '/%2e%2e/admin', '/chat/%2E%2E/%2e%2e/x', '/a%2fb', '/a%5c..%5cb']) {
      // fetch would resolve plain dot segments itself: send the raw path over node:http.
      const status = await new Promise<number>((resolve, reject) => {
        const u = new URL(base);
        const req = httpRequest(
          {
            host: u.hostname,
            port: u.port,
            method: 'POST',
            path: `${u.pathname}${rest}`,
            headers: { authorization: `Bearer ${ep.session.modelEnv.OPENAI_API_KEY}` },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
      expect([rest, status]).toEqual([rest, 404]);
    }
    expect(since(before)).toEqual([]);
  });
});
