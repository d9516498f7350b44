// Where the model-played user is called: user_simulator's `PROVIDER/MODEL`, the models entry of that
// PROVIDER (its URL, prices and api_key_env), the key read from the harness's environment.
import { durationMs, type StategateConfig } from '../config/schema.js';
import type { SimulatorEndpoint } from './simulator.js';

/** The simulator's endpoint, or undefined when stategate.yml names no user_simulator. Throws on one it cannot call. */
export function simulatorEndpoint(
  config: Pick<StategateConfig, 'user_simulator' | 'models'>,
  env: NodeJS.ProcessEnv,
): SimulatorEndpoint | undefined {
  const simulator = config.user_simulator;
  if (!simulator) return undefined;
  const slash = simulator.model.indexOf('/');
  const provider = simulator.model.slice(0, slash);
  const model = simulator.model.slice(slash + 1);
  const entry = Object.hasOwn(config.models, provider) ? config.models[provider] : undefined;
  if (!entry) throw new Error(`user_simulator.model ${simulator.model}: models has no provider ${provider}`);
  if (entry.api !== 'openai')
    throw new Error(
      `user_simulator.model ${simulator.model}: the user simulator speaks the OpenAI chat completions API; models.${provider} is api: ${entry.api}`,
    );
  const apiKey = entry.api_key_env ? env[entry.api_key_env] : undefined;
  return {
    provider,
    url: entry.url,
    model,
    ...(apiKey ? { apiKey } : {}),
    timeoutMs: durationMs(simulator.timeout),
    prices: entry.prices,
  };
}
