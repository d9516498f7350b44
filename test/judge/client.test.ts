// The judge client against a loopback server speaking the chat-completions format.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gradeJudge } from '../../src/expectations/kinds/judge.js';
import { askJudge, toJudgeResult } from '../../src/judge/client.js';
import { parseJudgeAnswer } from '../../src/judge/prompt.js';
import {
  answer,
  type ChatResponder,
  type ChatServer,
  completion,
  startChatServer,
} from '../helpers/chat-server.js';

let chat: ChatServer;
let url = '';
let handler: ChatResponder = () => undefined;
const seen: { body: Record<string, unknown>; auth?: string; path?: string }[] = [];

beforeAll(async () => {
  chat = await startChatServer((body, req, res) => {
    seen.push({ body, auth: req.headers.authorization, path: req.url });
    handler(body, req, res);
  });
  url = chat.url;
});

afterAll(() => chat.close());

const question = {
  criterion: 'The reply tells the customer the refund was issued once',
  message: 'Refund ORD-1001 please',
  reply: 'I issued a refund of $40 for ORD-1001.',
};
const options = () => ({ url, model: 'judge-model', apiKey: 'k-123', timeoutMs: 2000 });

describe('askJudge', () => {
  it('sends the criterion and the reply, and reads label, score and quote', async () => {
    handler = (_b, _q, res) =>
      answer(res, 200, completion('{"label":"pass","score":0.9,"quote":"I issued a refund of $40"}'));
    const outcome = await askJudge(options(), question);
    expect(outcome).toEqual({
      answer: { label: 'pass', score: 0.9, quote: 'I issued a refund of $40', quoteDropped: false },
    });
    const last = seen[seen.length - 1];
    expect(last.path).toBe('/v1/chat/completions');
    expect(last.auth).toBe('Bearer k-123');
    expect(last.body.model).toBe('judge-model');
    expect(JSON.stringify(last.body.messages)).toContain(question.criterion);
    expect(JSON.stringify(last.body.messages)).toContain('I issued a refund of $40 for ORD-1001.');
    const grade = gradeJudge({ criterion: question.criterion, threshold: 0.7 }, toJudgeResult(outcome));
    expect(grade.verdict).toBe('pass');
  });

  it('drops a quote that is not in the reply, and says so', async () => {
    handler = (_b, _q, res) =>
      answer(res, 200, completion('```json\n{"label":"pass","score":0.8,"quote":"refunded twice"}\n```'));
    const outcome = await askJudge(options(), question);
    expect(outcome).toEqual({ answer: { label: 'pass', score: 0.8, quoteDropped: true } });
  });

  it('fails a pass below the threshold and a fail label', async () => {
    handler = (_b, _q, res) => answer(res, 200, completion('{"label":"pass","score":0.5,"quote":""}'));
    const low = toJudgeResult(await askJudge(options(), question));
    expect(gradeJudge({ criterion: 'c', threshold: 0.7 }, low).verdict).toBe('fail');
    handler = (_b, _q, res) => answer(res, 200, completion('{"label":"fail","score":0.95,"quote":""}'));
    const failed = toJudgeResult(await askJudge(options(), question));
    expect(gradeJudge({ criterion: 'c', threshold: 0.7 }, failed).verdict).toBe('fail');
  });

  it('gives an error, never a score, when rate-limited, failing or refusing', async () => {
    handler = (_b, _q, res) => answer(res, 429, '{"error":{"message":"slow down"}}');
    expect(await askJudge(options(), question)).toEqual({ error: 'the judge is rate-limited (HTTP 429)' });
    handler = (_b, _q, res) => answer(res, 503, '{}');
    expect(await askJudge(options(), question)).toEqual({ error: 'the judge answered HTTP 503' });
    handler = (_b, _q, res) =>
      answer(res, 200, completion('', { content: null, refusal: 'I cannot help with that.' }));
    expect(await askJudge(options(), question)).toEqual({
      error: 'the judge refused: I cannot help with that.',
    });
    const grade = gradeJudge(
      { criterion: 'c', threshold: 0.7 },
      toJudgeResult(await askJudge(options(), question)),
    );
    expect(grade.verdict).toBe('error');
  });

  it('gives an error for an answer it cannot read', async () => {
    handler = (_b, _q, res) => answer(res, 200, completion('It looks fine to me.'));
    expect(await askJudge(options(), question)).toEqual({
      error: `the judge's answer is unparsable: no JSON object in the answer: "It looks fine to me."`,
    });
    handler = (_b, _q, res) => answer(res, 200, completion('{"label":"maybe","score":0.5}'));
    expect(await askJudge(options(), question)).toEqual({
      error: `the judge's answer is unparsable: label must be "pass" or "fail", got "maybe"`,
    });
    handler = (_b, _q, res) => answer(res, 200, 'not json');
    const outcome = await askJudge(options(), question);
    expect('error' in outcome && outcome.error).toMatch(/^the judge's response is not JSON/);
  });

  it('gives an error when the judge is slow', async () => {
    handler = (_b, _q, res) => {
      setTimeout(() => answer(res, 200, completion('{"label":"pass","score":1}')), 3000).unref();
    };
    expect(await askJudge({ ...options(), timeoutMs: 100 }, question)).toEqual({
      error: 'the judge did not answer within 100ms',
    });
  });

  it('gives an error when the judge is down', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await askJudge({ ...options(), url: `http://127.0.0.1:${port}` }, question)).toEqual({
      error: 'the judge is unreachable: ECONNREFUSED',
    });
  });
});

describe('parseJudgeAnswer', () => {
  it('refuses a score outside 0..1', () => {
    expect(() => parseJudgeAnswer('{"label":"pass","score":7}', 'r')).toThrow(
      'score must be a number from 0 to 1, got 7',
    );
  });
});
