// The run's side of the model gateway (docs/models.md): each `models` entry with its real key read
// from the harness's environment once, the run's recorded spend against budget.run_usd, and the
// model part of one episode's gateway session.
import type { ModelFaultRule, StategateConfig } from '../config/schema.js';
import type { ModelRoute, ModelSpec } from '../gateway/types.js';

/** The run's spend on the agents' model calls, from the records; past run_usd no episode starts. */
export class RunSpend {
  private spent = 0;
  private cutCount = 0;

  constructor(readonly limitUsd?: number) {}

  add(usd: number): void {
    this.spent += usd;
  }

  get spentUsd(): number {
    return this.spent;
  }

  /** Episodes that did not start because the budget was spent. */
  get cut(): number {
    return this.cutCount;
  }

  /** Whether the run's budget is spent; counts the episode that asked as cut when it is. */
  refuseStart(): boolean {
    if (this.limitUsd === undefined || this.spent < this.limitUsd) return false;
    this.cutCount++;
    return true;
  }
}

/** What every episode of the run shares: the routes (with their keys), the episode budget, the spend. */
export interface RunModels {
  providers: Record<string, ModelRoute>;
  episodeUsd?: number;
  spend: RunSpend;
}

/** The variables the model gateway reads keys from: never passed to an agent. */
export function modelKeyEnvs(config: Pick<StategateConfig, 'models'>): string[] {
  return Object.values(config.models ?? {}).flatMap((m) => (m.api_key_env ? [m.api_key_env] : []));
}

/**
 * The run's model routes, keys read from `env`. Throws when an api_key_env is not set: every call
 * would be refused by the provider, and the agent's failures would say nothing about the agent.
 */
export function runModels(
  config: Pick<StategateConfig, 'models' | 'budget'>,
  env: NodeJS.ProcessEnv,
  configFile: string,
): RunModels | undefined {
  const entries = Object.entries(config.models ?? {});
  if (entries.length === 0) return undefined;
  const providers: Record<string, ModelRoute> = {};
  const unset: string[] = [];
  for (const [name, m] of entries) {
    const key = m.api_key_env ? env[m.api_key_env] : undefined;
    if (m.api_key_env && !key) unset.push(`models.${name}.api_key_env: ${m.api_key_env} is not set`);
    providers[name] = {
      api: m.api,
      url: m.url,
      prices: m.prices,
      ...(key ? { key } : {}),
      ...(m.env ? { env: m.env } : {}),
    };
  }
  if (unset.length > 0)
    throw new Error(
      `${configFile}: ${unset.join('; ')} (set it in the step's env: from a secret; the agent never sees it)`,
    );
  return { providers, episodeUsd: config.budget?.episode_usd, spend: new RunSpend(config.budget?.run_usd) };
}

/** The model part of one episode's gateway session. */
export function episodeModels(
  run: RunModels,
  faults: readonly ModelFaultRule[],
  timeoutMs: number,
): ModelSpec {
  return {
    providers: run.providers,
    faults,
    episodeUsd: run.episodeUsd,
    onSpend: (usd) => run.spend.add(usd),
    timeoutMs,
  };
}
