// The model-played user (`user: {model: true}`): user_simulator's provider called by the harness
// directly with the harness's key (never through the agent's gateway), temperature 0 and the
// episode's seed. Its turns are pinned across the pair: within a run, the same scenario, repeat and
// transcript so far get the same turn from the run's cache, so a base and a head that say the same
// thing hear the same answer. Any failure to get a turn is a SimulatorError (the episode's error,
// never the agent's failure); its tokens and cost are counted apart from the agent's.
import { createHash } from 'node:crypto';
import type { Scenario, UserSpec } from '../config/schema.js';
import { canonicalJson } from '../model/canonical-json.js';
import type { ConversationTurn, SimulatorUsage } from '../model/episode.js';
import { costUsd, type ModelPrice, type ModelUsage, usageIn } from '../model/model-usage.js';
import { SimulatorError, type UserPlayer } from './driver.js';
import type { PlayedEpisode, UserPlayers } from './players.js';
import type { UserAnswer } from './scripted-user.js';
import { factsIn, STOP, simulatorMessages } from './simulator-prompt.js';

/** Where and how the harness reaches the simulator's model. */
export interface SimulatorEndpoint {
  /** The models entry's name (the PROVIDER of user_simulator.model). */
  provider: string;
  /** An OpenAI-compatible base URL; `/chat/completions` is appended. */
  url: string;
  model: string;
  /** The harness's key (from api_key_env), sent only to `url`. */
  apiKey?: string;
  timeoutMs: number;
  prices: Readonly<Record<string, ModelPrice>>;
}

/** One model turn: the text it said and what the call used (undefined when answered from the cache). */
interface Said {
  text: string;
  usage?: ModelUsage;
}

/** The run's user simulator: one cache of turns for both sides. */
export class UserSimulator implements UserPlayers {
  private readonly turns = new Map<string, Promise<Said>>();

  constructor(private readonly endpoint: SimulatorEndpoint) {}

  simulator(scenario: Scenario, episode: PlayedEpisode): UserPlayer {
    const user = scenario.user!;
    const usage: SimulatorUsage = {
      provider: this.endpoint.provider,
      model: this.endpoint.model,
      calls: 0,
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      cached: 0,
    };
    let priced = true;
    return {
      answer: async (turn, transcript): Promise<UserAnswer> => {
        if (turn.done) return { end: 'agent' };
        const key = turnKey(scenario.id, episode.repeat, transcript);
        let pending = this.turns.get(key);
        const fresh = pending === undefined;
        if (!pending) {
          pending = this.ask(user, transcript, episode.seed);
          this.turns.set(key, pending);
          // A failed turn is not pinned: the retried episode asks again.
          pending.catch(() => this.turns.delete(key));
        }
        const said = await pending;
        if (fresh && said.usage) {
          usage.calls += 1;
          usage.inputTokens += said.usage.input_tokens;
          usage.outputTokens += said.usage.output_tokens;
          usage.cachedInputTokens += said.usage.cached_input_tokens;
          const cost = costUsd(this.endpoint.prices, this.endpoint.model, said.usage);
          if (cost === undefined) priced = false;
          else usage.costUsd = (usage.costUsd ?? 0) + cost;
        } else if (fresh) usage.calls += 1;
        else usage.cached += 1;
        if (!priced) delete usage.costUsd;
        if (said.text.includes(STOP)) return { end: 'user' };
        return { text: said.text, facts: factsIn(said.text, user.facts) };
      },
      usage: () => ({ ...usage }),
    };
  }

  /** One chat-completions call for the next user turn. */
  private async ask(user: UserSpec, transcript: readonly ConversationTurn[], seed: number): Promise<Said> {
    const { url, model, apiKey, timeoutMs } = this.endpoint;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    let body: unknown;
    try {
      const response = await fetch(`${url.replace(/\/+$/, '')}/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model, temperature: 0, seed, messages: simulatorMessages(user, transcript) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) throw new SimulatorError(`the user simulator answered HTTP ${response.status}`);
      body = await response.json();
    } catch (err) {
      if (err instanceof SimulatorError) throw err;
      const e = err as Error;
      if (e.name === 'TimeoutError')
        throw new SimulatorError(`the user simulator did not answer within ${timeoutMs} ms`);
      throw new SimulatorError(`the user simulator could not be reached or answered no JSON: ${e.message}`);
    }
    const message = (body as { choices?: { message?: { content?: unknown; refusal?: unknown } }[] } | null)
      ?.choices?.[0]?.message;
    if (typeof message?.refusal === 'string' && message.refusal !== '')
      throw new SimulatorError(`the user simulator refused: ${message.refusal.slice(0, 200)}`);
    if (typeof message?.content !== 'string' || message.content.trim() === '')
      throw new SimulatorError('the user simulator answered with no text');
    return { text: message.content.trim(), usage: usageIn('openai', body) };
  }
}

/** The pin of one user turn: scenario, repeat and the transcript so far (roles and texts). */
export function turnKey(scenario: string, repeat: number, transcript: readonly ConversationTurn[]): string {
  const said = transcript.map((t) => [t.role, t.text]);
  return createHash('sha256').update(canonicalJson({ scenario, repeat, said })).digest('hex');
}
