// A side at run time: its checkout, its agent configuration, and how to start its agent.
import { join } from 'node:path';
import type { AgentServer, EpisodeVars } from '../agent/index.js';
import { buildAgentEnv, runCommandAgent, runSetup, startAgentServer } from '../agent/index.js';
import type { AgentConfig } from '../config/schema.js';
import type { AgentRun, Side } from '../record.js';
import type { Checkout } from './checkout.js';
import { prepareContainerSide } from './side-container.js';

export interface AgentRequest {
  input: { message: string; context: Record<string, unknown> };
  vars: EpisodeVars;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface SideRuntime {
  side: Side;
  checkout: Checkout;
  agent: AgentConfig;
  runAgent(req: AgentRequest): Promise<AgentRun>;
  /** Stops the agent server, if any. */
  stop(): Promise<void>;
  /** Where the agent server's log is kept, if any. */
  logFile?: string;
}

export interface SideOptions {
  side: Side;
  checkout: Checkout;
  agent: AgentConfig;
  outDir: string;
  harnessEnv: NodeJS.ProcessEnv;
  onLog?: (message: string) => void;
}

/** The side's agent config with --isolation (or the action's `isolation` input) applied. */
export function withIsolation(
  agent: AgentConfig,
  isolation: AgentConfig['isolation'] | undefined,
  configFile: string,
): AgentConfig {
  if (!isolation || isolation === agent.isolation) return agent;
  if (isolation === 'container' && !agent.image && !agent.dockerfile)
    throw new Error(
      `${configFile}: isolation container was asked for, but agent.image or agent.dockerfile is not set: name the image the agent runs in`,
    );
  if (isolation === 'container' && agent.url && !agent.serve)
    throw new Error(
      `${configFile}: isolation container with agent.url needs agent.serve (the server runs in the container)`,
    );
  return { ...agent, isolation };
}

/** Runs agent.setup (once), starts agent.serve (once) and returns how to run one episode. */
export async function prepareSide(opts: SideOptions): Promise<SideRuntime> {
  const { side, checkout, agent } = opts;
  const baseEnv = (vars?: EpisodeVars) =>
    buildAgentEnv({ harnessEnv: opts.harnessEnv, env: agent.env, passEnv: agent.pass_env, episode: vars });
  if (agent.isolation === 'container') return prepareContainerSide(opts, baseEnv);

  if (agent.setup) {
    opts.onLog?.(`${side}: running setup: ${agent.setup}`);
    const res = await runSetup(agent.setup, checkout.dir, baseEnv(), 15 * 60_000);
    if (!res.ok) {
      throw new Error(
        `${side}: agent.setup '${agent.setup}' failed (exit ${res.exitCode}):\n${res.output.slice(-2000)}`,
      );
    }
  }

  if (agent.url) {
    const logFile = join(opts.outDir, `agent-server-${side}.log`);
    const server: AgentServer = await startAgentServer({
      serve: agent.serve,
      url: agent.url,
      cwd: checkout.dir,
      env: baseEnv(),
      logFile,
    });
    return {
      side,
      checkout,
      agent,
      logFile,
      runAgent: (req) => server.runEpisode(req),
      stop: () => server.stop(),
    };
  }

  const command = agent.command!;
  return {
    side,
    checkout,
    agent,
    runAgent: (req) =>
      runCommandAgent({
        command,
        cwd: checkout.dir,
        env: baseEnv(req.vars),
        input: req.input,
        timeoutMs: req.timeoutMs,
        signal: req.signal,
      }),
    stop: async () => undefined,
  };
}
