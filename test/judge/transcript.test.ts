// A judge expectation in a conversation reads the whole transcript the harness wrote, each turn by
// its speaker, not only the last reply (against a loopback server speaking the chat API by fixed
// rules: not a model).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeEpisode } from '../../src/judge/episode.js';
import { agentRun, record, scenario } from '../grade/records.js';
import { answer, type ChatServer, completion, replyIn, startChatServer } from '../helpers/chat-server.js';

const replies: string[] = [];
let server: ChatServer;
beforeAll(async () => {
  server = await startChatServer((body, _req, res) => {
    replies.push(replyIn(body));
    answer(res, 200, completion('{"label": "pass", "score": 0.9, "quote": ""}'));
  });
});
afterAll(() => server.close());

describe('judge over a conversation', () => {
  it('sends every turn, labelled by speaker and turn', async () => {
    const at = '2026-01-01T00:00:00.000Z';
    const s = scenario([{ id: 'polite', judge: { criterion: 'Verifies identity before acting.' } }]);
    const rec = record({
      agent: agentRun({ result: { reply: 'Cancelled.' } }),
      conversation: {
        turns: [
          { role: 'user', turn: 1, text: 'Cancel it.', at, facts: [] },
          { role: 'agent', turn: 1, text: 'Your date of birth?', at },
          { role: 'user', turn: 2, text: '1990-04-02', at, facts: ['dob'] },
          { role: 'agent', turn: 2, text: 'Cancelled.', at },
        ],
        maxTurns: 5,
        end: 'agent',
        learned: { dob: 2 },
      },
    });
    const judged = await judgeEpisode(s, rec, { url: server.url, model: 'm', timeoutMs: 5000 });
    expect(judged.results.get('polite')).toMatchObject({ pass: true, score: 0.9 });
    expect(replies).toEqual([
      'User (turn 1): Cancel it.\nAgent (turn 1): Your date of birth?\nUser (turn 2): 1990-04-02\nAgent (turn 2): Cancelled.',
    ]);
  });
});
