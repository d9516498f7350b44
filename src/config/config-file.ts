// stategate.yml (docs/formats/stategate.md): validation, and the file lists the rest of the suite is read
// from. When the config has problems elsewhere, the lists that are themselves valid are still used,
// so scenarios and twins get checked in the same pass.
import { isHarnessSecret } from './harness-secrets.js';
import { notAMapping } from './scenario-file.js';
import { StategateConfig } from './schema.js';
import type { Problem } from './suite.js';
import type { NamedFile } from './template-files.js';
import { type FieldPath, problemAt, type YamlSource } from './yaml-source.js';
import { validate } from './zod-problems.js';

/** The file lists in the config: globs for twins and scenarios, paths for the template. */
export interface ConfigFileLists {
  twins: NamedFile[];
  scenarios: NamedFile[];
  schema: NamedFile[];
  fixtures: NamedFile[];
}

/** Validates the parsed config; the config when valid, the file lists when readable, and problems. */
export function readConfig(
  value: unknown,
  source: YamlSource,
): {
  config?: StategateConfig;
  /** The database section, when it is valid on its own (even with problems elsewhere). */
  database?: StategateConfig['database'];
  lists?: ConfigFileLists;
  problems: Problem[];
} {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { problems: [notAMapping(source, value, 'version: 1, agent, database, twins and scenarios')] };
  }
  const raw = value as Record<string, unknown>;
  const result = validate(StategateConfig, raw, source);
  const problems = result.ok ? [] : [...result.problems];
  if (result.ok) problems.push(...configChecks(result.data, source));
  const config = result.ok ? result.data : undefined;
  const shape = StategateConfig.shape;
  const database = config?.database ?? shape.database.safeParse(raw.database).data;
  const twins = config?.twins ?? shape.twins.safeParse(raw.twins).data;
  const scenarios = config?.scenarios ?? shape.scenarios.safeParse(raw.scenarios).data;
  if (!database || !twins || !scenarios) return { config, database, problems };
  const rawDatabase = (raw.database ?? {}) as Record<string, unknown>;
  const lists: ConfigFileLists = {
    twins: named(twins, ['twins'], raw.twins),
    scenarios: named(scenarios, ['scenarios'], raw.scenarios),
    schema: named(database.schema, ['database', 'schema'], rawDatabase.schema),
    fixtures: named(database.fixtures, ['database', 'fixtures'], rawDatabase.fixtures),
  };
  return { config, database, lists, problems };
}

/** Pairs each listed name with the config field that holds it (a single string is the field itself). */
function named(names: string[], field: FieldPath, raw: unknown): NamedFile[] {
  return names.map((name, i) => ({ name, field: Array.isArray(raw) ? [...field, i] : field }));
}

/** Checks zod cannot express on its own. */
function configChecks(config: StategateConfig, source: YamlSource): Problem[] {
  const problems: Problem[] = [];
  const { repeats } = config;
  if (typeof repeats === 'object' && repeats.min > repeats.max) {
    problems.push(
      problemAt(source, ['repeats', 'max'], `max (${repeats.max}) is less than min (${repeats.min})`),
    );
  }
  // The harness sends the key to judge.url: a workflow token named here would go to that server.
  const keyEnv = config.judge?.api_key_env;
  if (keyEnv && isHarnessSecret(keyEnv)) {
    problems.push(
      problemAt(
        source,
        ['judge', 'api_key_env'],
        `${keyEnv} is never sent to a judge: set the judge's own key in another variable and name that`,
      ),
    );
  }
  for (const [name, provider] of Object.entries(config.models)) {
    const env = provider.api_key_env;
    if (env && isHarnessSecret(env))
      problems.push(
        problemAt(
          source,
          ['models', name, 'api_key_env'],
          `${env} is never sent to a model provider: set the provider's key in another variable and name that`,
        ),
      );
    if (env && config.agent.pass_env.includes(env))
      problems.push(
        problemAt(
          source,
          ['agent', 'pass_env'],
          `${env} is the key of models.${name}: the agent reaches the provider through the model gateway and never gets its key; remove it from pass_env`,
        ),
      );
  }
  // Each provider's base URL is a variable of its own in the agent's environment (docs/models.md).
  const urlVarOwner = new Map<string, string>();
  for (const [name, provider] of Object.entries(config.models)) {
    const variable =
      provider.env?.url ?? (provider.api === 'openai' ? 'OPENAI_BASE_URL' : 'ANTHROPIC_BASE_URL');
    const first = urlVarOwner.get(variable);
    if (first === undefined) urlVarOwner.set(variable, name);
    else
      problems.push(
        problemAt(
          source,
          ['models', name],
          `models.${first} and models.${name} would both set ${variable} for the agent: give models.${name} env: {url: ..., key: ...} names of its own`,
          { key: true },
        ),
      );
  }
  const simulated = config.user_simulator?.model.split('/')[0];
  if (simulated !== undefined && !(simulated in config.models))
    problems.push(
      problemAt(
        source,
        ['user_simulator', 'model'],
        `names provider ${simulated}, which models does not declare (declared: ${Object.keys(config.models).join(', ') || 'none'})`,
      ),
    );
  return problems;
}
