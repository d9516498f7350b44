// The clinic suite with a model-played user, as a run plays it: user_simulator names a models entry
// whose URL is a local server that speaks the OpenAI chat completions API and answers by fixed
// rules. It is NOT a model; it stands in for one so that the test can read what crossed the wire:
// the harness's key only there, the base and head asking the same thing getting one call between
// them (the run's cache pins the user turn), and the pair still BLOCK on the hasty head.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { GradedEpisode } from '../../src/model/episode.js';
import { runCompare } from '../../src/run/pipeline.js';
import { answer, type ChatServer, completion, startChatServer } from '../helpers/chat-server.js';
import { ROOT } from '../helpers/demo-repo.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const KEY = 'sk-simulator-harness-only';
const dirs: string[] = [];
const asked: { auth?: string; last: string; seed: unknown }[] = [];
let notAModel: ChatServer;

beforeAll(async () => {
  process.env.STATEGATE_TEST_SIMULATOR_KEY = KEY;
  // Fixed rules in place of a model: the date of birth when asked for it, yes when asked to go ahead.
  notAModel = await startChatServer((body, req, res) => {
    const messages = body.messages as { role: string; content: string }[];
    const last = messages[messages.length - 1].content;
    asked.push({ auth: req.headers.authorization, last, seed: body.seed });
    const text = /date of birth/i.test(last)
      ? 'My date of birth is 1990-04-02.'
      : /shall i/i.test(last)
        ? 'Yes, go ahead.'
        : '###STOP###';
    answer(res, 200, completion(text));
  });
});
afterAll(async () => {
  delete process.env.STATEGATE_TEST_SIMULATOR_KEY;
  await notAModel.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function clinic(mode: 'careful' | 'hasty'): string {
  const dir = mkdtempSync(join(tmpdir(), `sg-clinic-model-${mode}-`));
  dirs.push(dir);
  cpSync(join(ROOT, 'examples', 'clinic-agent'), dir, { recursive: true });
  const config = parse(readFileSync(join(dir, 'stategate.yml'), 'utf8'));
  config.agent.env.CLINIC_AGENT = mode;
  config.models = {
    standin: { api: 'openai', url: notAModel.url, api_key_env: 'STATEGATE_TEST_SIMULATOR_KEY' },
  };
  config.user_simulator = { model: 'standin/not-a-model' };
  writeFileSync(join(dir, 'stategate.yml'), stringify(config));
  // Only the shared-name case, played by the model-played user.
  const scenario = parse(readFileSync(join(dir, 'scenarios', 'cancel-same-name.yaml'), 'utf8'));
  scenario.user = {
    model: true,
    instructions: 'You are John Smith (born 1990-04-02) and want your Tuesday appointment cancelled.',
    facts: { dob: { value: '1990-04-02' }, 'go-ahead': { value: 'go ahead' } },
    max_turns: 6,
  };
  writeFileSync(join(dir, 'scenarios', 'cancel-same-name.yaml'), stringify(scenario));
  for (const other of ['cancel-unique-name.yaml', 'next-appointment.yaml'])
    rmSync(join(dir, 'scenarios', other));
  return dir;
}

describe('a model-played user in a run', () => {
  it('is pinned across the pair, keeps its key to itself, and careful vs hasty is still BLOCK', {
    timeout: 300_000,
  }, async () => {
    asked.length = 0;
    const base = clinic('careful');
    const head = clinic('careful');
    const out = join(head, '.stategate');
    const same = await runCompare({
      base,
      head,
      repo: head,
      out,
      repeats: 1,
      engine: 'postgres',
      databaseUrl: ADMIN_URL,
    });
    expect(same.report.verdict).toBe('PASS');
    // Both sides said the same two things before the agent ended: two calls, not four.
    expect(asked).toHaveLength(2);
    expect(asked.map((a) => a.seed)).toEqual([asked[0].seed, asked[0].seed]);
    expect(new Set(asked.map((a) => a.auth))).toEqual(new Set([`Bearer ${KEY}`]));
    const episodes = readFileSync(join(out, 'episodes.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as GradedEpisode);
    const [b, h] = ['base', 'head'].map((side) => episodes.find((g) => g.record.side === side)!.record);
    expect(b.conversation?.turns.map((t) => t.text)).toEqual(h.conversation?.turns.map((t) => t.text));
    expect(b.conversation?.learned).toEqual({ dob: 2, 'go-ahead': 3 });
    expect((b.conversation?.simulator?.calls ?? 0) + (h.conversation?.simulator?.calls ?? 0)).toBe(2);
    expect((b.conversation?.simulator?.cached ?? 0) + (h.conversation?.simulator?.cached ?? 0)).toBe(2);
    // The agent never had the key.
    expect(JSON.stringify(episodes)).not.toContain(KEY);

    const hasty = clinic('hasty');
    const blocked = await runCompare({
      base,
      head: hasty,
      repo: hasty,
      out: join(hasty, '.stategate'),
      repeats: 1,
      engine: 'postgres',
      databaseUrl: ADMIN_URL,
    });
    expect(blocked.report.cases.map((c) => [c.id, c.class])).toEqual([
      ['cancel-same-name', 'new-critical-failure'],
    ]);
    expect(blocked.report.verdict).toBe('BLOCK');
  });
});
