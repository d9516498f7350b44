// `agent.pass_env` names variables the harness passes through; one that is not set in the harness's
// environment reaches the agent as nothing, and an agent that needs it (a model key the workflow
// never set) fails every episode on both sides alike, which reads as "unchanged". So `validate` and
// the start of every run say which are unset, by name.
import { readFile } from 'node:fs/promises';
import { displayPath } from './source-file.js';
import type { Problem, Suite } from './suite.js';
import { locate, parseYaml } from './yaml-source.js';

/**
 * The names in `passEnv` that `env` does not set, in order: absent or empty (GitHub Actions sets a
 * secret that does not exist to the empty string).
 */
export function unsetPassEnv(passEnv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  return passEnv.filter((name, i) => (env[name] ?? '') === '' && passEnv.indexOf(name) === i);
}

/** The message a run and `validate` give for unset pass_env variables. */
export function unsetPassEnvMessage(names: readonly string[]): string {
  const list = names.join(', ');
  return names.length === 1
    ? `agent.pass_env names ${list}, which is not set (or empty) in this environment: the agent would start without it; set it (a secret the workflow passes in env:) or remove it from pass_env`
    : `agent.pass_env names ${list}, which are not set (or empty) in this environment: the agent would start without them; set them (secrets the workflow passes in env:) or remove them from pass_env`;
}

/** One problem per unset pass_env variable of a loaded suite, at its entry in stategate.yml. */
export async function unsetPassEnvProblems(
  suite: Pick<Suite, 'configFile' | 'config'>,
  env: NodeJS.ProcessEnv,
): Promise<Problem[]> {
  const passEnv = suite.config.agent.pass_env;
  const unset = unsetPassEnv(passEnv, env);
  if (unset.length === 0) return [];
  const text = await readFile(suite.configFile, 'utf8').catch(() => null);
  const file = displayPath(suite.configFile);
  const source = text === null ? null : parseYaml(file, text).source;
  return unset.map((name) => {
    const where = source ? locate(source, ['agent', 'pass_env', passEnv.indexOf(name)]) : { line: 1, col: 1 };
    return { file, ...where, message: unsetPassEnvMessage([name]) };
  });
}
