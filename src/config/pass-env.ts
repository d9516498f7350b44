// The variables agent.pass_env names that the harness's environment does not set: an agent that
// needs its key and gets none fails every episode before its first tool call, on both sides alike,
// which reads as "unchanged". So `validate` (at the entry's line) and the start of every run say so
// by name.
import { readFile } from 'node:fs/promises';
import { displayPath } from './source-file.js';
import type { Problem, Suite } from './suite.js';
import { locate, parseYaml } from './yaml-source.js';

/**
 * The names in `passEnv` that `env` does not set (or sets to the empty string: what GitHub Actions
 * gives a secret that does not exist), in the order given, each once.
 */
export function unsetPassEnv(passEnv: readonly string[] | undefined, env: NodeJS.ProcessEnv): string[] {
  const names = passEnv ?? [];
  return names.filter((name, i) => (env[name] ?? '') === '' && names.indexOf(name) === i);
}

/** One sentence naming the unset variables, or null when every one is set. */
export function unsetPassEnvSentence(
  passEnv: readonly string[] | undefined,
  env: NodeJS.ProcessEnv,
): string | null {
  const unset = unsetPassEnv(passEnv, env);
  if (unset.length === 0) return null;
  const names = unset.join(', ');
  return `agent.pass_env names ${unset.length === 1 ? 'a variable' : 'variables'} this environment does not set: ${names}`;
}

/** What `validate` says of one unset variable at its entry. */
function unsetPassEnvMessage(name: string): string {
  return `agent.pass_env names ${name}, which is not set (or empty) in this environment: the agent would start without it; set it (a secret the workflow passes in env:) or remove it from pass_env`;
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
    return { file, ...where, message: unsetPassEnvMessage(name) };
  });
}
