// Judging an episode's reply on its `judge` expectations, and grading with what the judge said.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gradeEpisode } from '../../src/grade/index.js';
import { judgeClientOptions, judgeEpisode } from '../../src/judge/episode.js';
import { episode, scenario } from '../compare/builders.js';
import { answer, type ChatServer, completion, startChatServer } from '../helpers/chat-server.js';

let chat: ChatServer;
let url = '';
const asked: string[] = [];

beforeAll(async () => {
  chat = await startChatServer((body, _req, res) => {
    const content = JSON.stringify(body.messages);
    asked.push(content);
    // Polite replies pass; a criterion about apologising gets a quote the reply does not contain.
    const verdict = content.includes('apolog')
      ? { label: 'pass', score: 0.9, quote: 'We are so sorry' }
      : { label: 'pass', score: 0.8, quote: 'Done.' };
    answer(res, 200, completion(JSON.stringify(verdict)));
  });
  url = chat.url;
});

afterAll(() => chat.close());

const s = scenario('polite', [
  { id: 'polite', judge: { criterion: 'The reply is polite', threshold: 0.7 } },
  { id: 'apology', judge: { criterion: 'The reply apologises', threshold: 0.95 } },
]);

describe('judgeEpisode', () => {
  it('asks once per judge expectation and feeds the grader; dropped quotes are counted', async () => {
    const e = episode(s, 'head', 1);
    const judged = await judgeEpisode(
      s,
      e.record,
      judgeClientOptions({ url, model: 'm', timeout: '5s' }, {}),
    );
    expect(asked).toHaveLength(2);
    expect(judged.droppedQuotes).toBe(1);
    expect(judged.results.get('polite')).toEqual({ score: 0.8, pass: true, reason: '"Done."' });
    expect(judged.results.get('apology')).toEqual({ score: 0.9, pass: true });
    const graded = gradeEpisode(s, e.record, new Map(), judged.results);
    const verdicts = Object.fromEntries(graded.results.map((r) => [r.id, r.verdict]));
    expect(verdicts).toMatchObject({ polite: 'pass', apology: 'fail' });
  });

  it('without a judge, judge expectations are errors, not scores', async () => {
    const e = episode(s, 'head', 1);
    const judged = await judgeEpisode(s, e.record, null);
    const graded = gradeEpisode(s, e.record, new Map(), judged.results);
    expect(graded.results.find((r) => r.id === 'polite')?.verdict).toBe('error');
  });

  it('reads the key from the named variable, and says when it is missing', () => {
    const config = { url, model: 'm', timeout: '5s', api_key_env: 'JUDGE_KEY' };
    expect(judgeClientOptions(config, { JUDGE_KEY: 'k' })).toEqual({
      url,
      model: 'm',
      timeoutMs: 5000,
      apiKey: 'k',
    });
    expect(() => judgeClientOptions(config, {})).toThrow(
      'judge.api_key_env names JUDGE_KEY, which is not set',
    );
  });
});
