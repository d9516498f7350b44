// A side whose agent runs with `agent.isolation: container`: agent.setup, each agent.command
// episode, or the agent.serve server run in containers of the side's image (see agent/container.ts).
import { join } from 'node:path';
import { AgentContainers } from '../agent/container.js';
import { ContainerServe } from '../agent/container-serve.js';
import {
  DEFAULT_GRACE_MS,
  type EpisodeVars,
  runCommandAgent,
  runSetup,
  startAgentServer,
} from '../agent/index.js';
import { insideTarget, ServeFront } from '../agent/serve-tunnel.js';
import type { SideOptions, SideRuntime } from './side.js';

/** prepareSide for agent.isolation: container; `env` builds the agent environment (with or without an episode). */
export async function prepareContainerSide(
  opts: SideOptions,
  env: (vars?: EpisodeVars) => Record<string, string>,
): Promise<SideRuntime> {
  const { side, checkout, agent } = opts;
  const containers = new AgentContainers({
    image: agent.image,
    dockerfile: agent.dockerfile,
    checkoutDir: checkout.dir,
    hide: opts.hide,
  });
  try {
    opts.onLog?.(`${side}: agent image ${await containers.imageName()} (isolation: container)`);
    if (agent.setup) {
      opts.onLog?.(`${side}: running setup in a container: ${agent.setup}`);
      const res = await runSetup(agent.setup, checkout.dir, env(), 15 * 60_000, {
        runner: (o) => containers.run({ ...o, writableCheckout: true }),
      });
      if (!res.ok) {
        throw new Error(
          `${side}: agent.setup '${agent.setup}' failed in its container (${res.error}):\n${res.output.slice(-2000)}`,
        );
      }
    }
    if (agent.url) {
      const logFile = join(opts.outDir, `agent-server-${side}.log`);
      const serveOpts = {
        serve: agent.serve!,
        env: env(),
        logFile,
        graceMs: DEFAULT_GRACE_MS,
        port: insideTarget(agent.url).port,
      };
      const front = await ServeFront.open(agent.url, () => new ContainerServe(containers, serveOpts));
      const server = await startAgentServer({
        serve: agent.serve,
        url: front.url,
        cwd: checkout.dir,
        env: env(),
        logFile,
        startServe: () => front.start(),
      }).catch(async (err) => {
        await front.close();
        throw err;
      });
      return {
        side,
        checkout,
        agent,
        logFile,
        // The episode's URLs are forwarded into the server that will answer: after a restart, the new one.
        runAgent: async (req) => {
          await server.settled();
          return server.runEpisode({ ...req, vars: await front.vars(req.vars) });
        },
        stop: async () => {
          await server.stop();
          await front.close();
          await containers.close();
        },
      };
    }
    const command = agent.command!;
    return {
      side,
      checkout,
      agent,
      runAgent: (req) => {
        // The container's stdin is a file written before it starts: no turn could follow the first.
        if (req.conversation)
          throw new Error(
            `${side}: a conversation scenario needs stdin open for the user's turns, which agent.isolation: container does not give a command agent yet; use agent.url with agent.serve in the container, or run this scenario without isolation: container`,
          );
        return runCommandAgent({
          command,
          cwd: checkout.dir,
          env: env(req.vars),
          input: req.input,
          timeoutMs: req.timeoutMs,
          signal: req.signal,
          runner: (o) => containers.run(o),
        });
      },
      stop: () => containers.close(),
    };
  } catch (err) {
    await containers.close();
    throw err;
  }
}
