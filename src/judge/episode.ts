// Asks the judge about every `judge` expectation of one episode, for gradeEpisode's judgeResults.
import type { z } from 'zod';
import { isHarnessSecret } from '../config/harness-secrets.js';
import { durationMs, type JudgeConfig, type Scenario } from '../config/schema.js';
import type { JudgeResult } from '../expectations/kind.js';
import type { EpisodeRecord } from '../model/episode.js';
import { askJudge, type JudgeClientOptions, toJudgeResult } from './client.js';

export interface JudgedEpisode {
  /** Keyed by expectation id; what gradeEpisode takes as judgeResults. */
  results: Map<string, JudgeResult>;
  /** Quotes the judge gave that were not in the reply, dropped. */
  droppedQuotes: number;
}

/** The client options of the `judge:` section; the key is read from `env` by name. */
export function judgeClientOptions(
  config: z.infer<typeof JudgeConfig>,
  env: NodeJS.ProcessEnv,
): JudgeClientOptions {
  const options: JudgeClientOptions = {
    url: config.url,
    model: config.model,
    timeoutMs: durationMs(config.timeout),
  };
  if (config.api_key_env) {
    // Whoever wrote judge.url receives the key: never one of the workflow's tokens.
    if (isHarnessSecret(config.api_key_env))
      throw new Error(
        `judge.api_key_env names ${config.api_key_env}, which is never sent to a judge: name a variable holding the judge's own key`,
      );
    const key = env[config.api_key_env];
    if (!key) throw new Error(`judge.api_key_env names ${config.api_key_env}, which is not set`);
    options.apiKey = key;
  }
  return options;
}

/** Judges one episode's reply on each `judge` expectation; none when the scenario has none. */
export async function judgeEpisode(
  scenario: Scenario,
  record: EpisodeRecord,
  options: JudgeClientOptions | null,
): Promise<JudgedEpisode> {
  const results = new Map<string, JudgeResult>();
  let droppedQuotes = 0;
  const asks = scenario.expect.filter((e) => 'judge' in e);
  // No judge configured: gradeJudge reports each one as an error, so the case is incomplete.
  if (!options || asks.length === 0 || record.infraError) return { results, droppedQuotes };
  // In a conversation the judge reads the whole transcript the harness wrote, each turn by its speaker.
  const reply = record.conversation
    ? record.conversation.turns
        .map((t) => `${t.role === 'user' ? 'User' : 'Agent'} (turn ${t.turn}): ${t.text}`)
        .join('\n')
    : record.agent.result?.reply;
  for (const e of asks) {
    if (typeof reply !== 'string') {
      results.set(e.id, { error: 'the agent gave no reply to judge' });
      continue;
    }
    const criterion = (e as { judge: { criterion: string } }).judge.criterion;
    const outcome = await askJudge(options, { criterion, message: scenario.input.message, reply });
    if ('answer' in outcome && outcome.answer.quoteDropped) droppedQuotes++;
    results.set(e.id, toJudgeResult(outcome));
  }
  return { results, droppedQuotes };
}
