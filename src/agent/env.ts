// The agent's environment (docs/agent-protocol.md): built from an allow-list, never inherited, so a
// runner's tokens cannot reach the code under test unless the user names them.
import { isHarnessSecret } from '../config/harness-secrets.js';
import type { EpisodeVars } from './types.js';

/** What the harness takes from its own environment for every agent, whatever the config says. */
const ALWAYS_PASSED = ['PATH', 'HOME', 'LANG', 'TZ'];
const LOCALE_PREFIX = 'LC_';

/**
 * Variables that never reach an agent, even when named: the workflow's tokens (they let a process
 * post as the repository, upload artifacts or mint cloud credentials) and the admin database URL.
 * The agent's config comes from the checkout under review, so naming one must not be enough.
 */
export function isNeverPassed(name: string): boolean {
  return isHarnessSecret(name);
}

/**
 * The addresses the harness gives each episode. The agent's sandbox (and container) has a network
 * of its own, and the harness carries connections to these addresses into it: a value of the
 * suite's own would have the harness connect the agent to any server it names (the machine's
 * PostgreSQL, another host), so only the harness sets them.
 */
const HARNESS_ADDRESSES = ['STATEGATE_TOOLS_URL', 'STATEGATE_MCP_URL', 'DATABASE_URL'];

/** Why a variable the config names is the harness's address to set, or null when it is not one. */
function harnessAddress(name: string): string | null {
  if (!HARNESS_ADDRESSES.includes(name)) return null;
  return name === 'DATABASE_URL'
    ? `${name} is set by stategate (the episode's own database, with database.expose: true) and is carried into the agent's sandbox, so a value of the suite's own is refused: use another name for a database of your own`
    : `${name} is set by stategate for each episode and is carried into the agent's sandbox, so a value of the suite's own is refused`;
}

// Short values (e.g. "1") would match by accident; real tokens are long.
const MIN_SECRET_LENGTH = 8;

/** A refused agent environment; every problem is in the message. */
export class AgentEnvError extends Error {
  constructor(readonly problems: string[]) {
    super(`agent environment refused: ${problems.join('; ')}`);
    this.name = 'AgentEnvError';
  }
}

export interface AgentEnvOptions {
  harnessEnv: NodeJS.ProcessEnv;
  /** agent.env from stategate.yml. */
  env: Record<string, string>;
  /** agent.pass_env from stategate.yml. */
  passEnv: string[];
  /**
   * The agent's other strings (command, serve, setup, url), by field: `${GITHUB_TOKEN}` expanded into
   * a command line would hand the token to the agent as surely as an environment variable.
   */
  strings?: Record<string, string | undefined>;
  /**
   * The variable the run's judge reads its key from (judge.api_key_env): the harness sends it to the
   * judge, so it is never passed to an agent either, by name or by value.
   */
  judgeKeyEnv?: string;
  /** The run's models.*.api_key_env: the model gateway holds those keys; never passed to an agent. */
  modelKeyEnvs?: string[];
}

/** Lists every reason the configured agent environment cannot be built (empty when it can). */
export function checkAgentEnv(opts: AgentEnvOptions): string[] {
  const problems: string[] = [];
  const judgeKey = opts.judgeKeyEnv;
  const modelKeys = opts.modelKeyEnvs ?? [];
  const refused = (name: string) => isNeverPassed(name) || name === judgeKey || modelKeys.includes(name);
  const why = (name: string) =>
    isNeverPassed(name)
      ? `${name} is never passed to an agent`
      : name === judgeKey
        ? `${name} is the judge's key (judge.api_key_env) and is never passed to an agent: give the agent a key of its own`
        : `${name} is a model provider's key (models.*.api_key_env): the model gateway holds it and the agent gets a key for its episode`;
  for (const name of opts.passEnv) {
    if (!/^[^=\0]+$/.test(name))
      problems.push(`agent.pass_env: ${JSON.stringify(name)} is not a variable name`);
    else if (refused(name)) problems.push(`agent.pass_env: ${why(name)}`);
    else if (harnessAddress(name)) problems.push(`agent.pass_env: ${harnessAddress(name)}`);
  }
  for (const name of Object.keys(opts.env)) {
    if (refused(name)) problems.push(`agent.env: ${why(name)}`);
    else if (harnessAddress(name)) problems.push(`agent.env: ${harnessAddress(name)}`);
  }
  // A `${ACTIONS_RUNTIME_TOKEN}` expanded into agent.env, or passed under another name, is the same leak.
  const secrets = Object.entries(opts.harnessEnv).filter(
    ([name, value]) => refused(name) && value !== undefined && value.length >= MIN_SECRET_LENGTH,
  );
  const carried: [string, string | undefined][] = [
    ...Object.entries(opts.env),
    ...opts.passEnv.map((name): [string, string | undefined] => [name, opts.harnessEnv[name]]),
  ];
  for (const [name, value] of carried) {
    if (refused(name) || value === undefined) continue;
    const secret = secrets.find(([, s]) => value.includes(s as string));
    if (secret) problems.push(`${name} carries the value of ${secret[0]}, which is never passed to an agent`);
  }
  for (const [field, value] of Object.entries(opts.strings ?? {})) {
    const secret = value === undefined ? undefined : secrets.find(([, s]) => value.includes(s as string));
    if (secret)
      problems.push(
        `${field} carries the value of ${secret[0]}, which never reaches an agent: remove the \${${secret[0]}} reference`,
      );
  }
  return problems;
}

/**
 * The environment shared by every episode of a side (and by agent.serve): PATH, HOME, LANG, LC_*,
 * TZ from the harness, then agent.env, then the pass_env names that are set. Throws AgentEnvError.
 */
export function baseAgentEnv(opts: AgentEnvOptions): Record<string, string> {
  const problems = checkAgentEnv(opts);
  if (problems.length > 0) throw new AgentEnvError(problems);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(opts.harnessEnv)) {
    if (value !== undefined && (ALWAYS_PASSED.includes(name) || name.startsWith(LOCALE_PREFIX)))
      out[name] = value;
  }
  Object.assign(out, opts.env);
  for (const name of opts.passEnv) {
    const value = opts.harnessEnv[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** The STATEGATE_* variables (and DATABASE_URL when exposed) of one episode. */
export function episodeEnv(episode: EpisodeVars): Record<string, string> {
  const out: Record<string, string> = {
    STATEGATE_TOOLS_URL: episode.toolsUrl,
    STATEGATE_MCP_URL: episode.mcpUrl,
    STATEGATE_EPISODE: episode.episode,
    STATEGATE_SCENARIO: episode.scenario,
    STATEGATE_SEED: String(episode.seed),
    STATEGATE_SIDE: episode.side,
  };
  if (episode.databaseUrl !== undefined) out.DATABASE_URL = episode.databaseUrl;
  // The model gateway shares the tools' listener: its URLs reach the agent wherever STATEGATE_TOOLS_URL does.
  Object.assign(out, episode.modelEnv);
  if (episode.conversation) out.STATEGATE_CONVERSATION = '1';
  return out;
}

/**
 * The full environment of one command-agent episode; the episode variables come last and win.
 * Without `episode` (agent.setup, agent.serve) it is baseAgentEnv. Throws AgentEnvError.
 */
export function buildAgentEnv(opts: AgentEnvOptions & { episode?: EpisodeVars }): Record<string, string> {
  const base = baseAgentEnv(opts);
  return opts.episode ? { ...base, ...episodeEnv(opts.episode) } : base;
}
