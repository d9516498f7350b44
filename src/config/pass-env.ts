// The variables agent.pass_env names that the harness's environment does not set: an agent that
// needs its key and gets none fails every episode before its first tool call, so `validate` and the
// start of every run say so by name.

/** The names in `passEnv` that `env` does not set (or sets to the empty string), in the order given. */
export function unsetPassEnv(passEnv: readonly string[] | undefined, env: NodeJS.ProcessEnv): string[] {
  return (passEnv ?? []).filter((name) => (env[name] ?? '') === '');
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
