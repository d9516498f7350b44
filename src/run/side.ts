// A side at run time: its checkout, its agent configuration, and how to start its agent.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentServer, EpisodeVars } from '../agent/index.js';
import {
  AgentStartError,
  buildAgentEnv,
  DEFAULT_GRACE_MS,
  refuseAnswering,
  runCommandAgent,
  runSetup,
  startAgentServer,
} from '../agent/index.js';
import {
  AGENT_UID,
  type CommandWrapper,
  harnessNamespaceOptions,
  type IsolationStatus,
  namespaceWrapper,
} from '../agent/namespace.js';
import { fillPort, freePort, hasPortPlaceholder, urlHost } from '../agent/port.js';
import { SideSandbox } from '../agent/sandbox.js';
import { SandboxServe } from '../agent/sandbox-serve.js';
import { insideTarget, ServeFront } from '../agent/serve-tunnel.js';
import type { AgentConfig } from '../config/schema.js';
import type { ConversationDriver } from '../conversation/driver.js';
import type { AgentRun, Side } from '../model/episode.js';
import { TOOL_NAME } from '../sandbox/embedded-download.js';
import { privatePaths } from '../sandbox/private-paths.js';
import type { Checkout } from './checkout.js';
import { prepareContainerSide } from './side-container.js';

export interface AgentRequest {
  input: { message: string; context: Record<string, unknown> };
  vars: EpisodeVars;
  timeoutMs: number;
  signal?: AbortSignal;
  /** A conversation scenario: the driver that plays the user and writes the transcript. */
  conversation?: ConversationDriver;
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
  /** From probeIsolation: namespaces for the agent's processes, or process groups only. */
  isolation?: IsolationStatus;
  /** Directories the agent must not reach (the out dir, the other side's checkout). */
  hide?: string[];
  /** host: the machine's network for the sandbox (agent.network: host from the base's config only). */
  network?: 'own' | 'host';
  /** The run's judge.api_key_env: the judge's key is never passed to an agent. */
  judgeKeyEnv?: string;
  /** The run's models.*.api_key_env: held by the model gateway, never passed to an agent. */
  modelKeyEnvs?: string[];
}

/**
 * The embedded engine's binaries in the runner's tool cache, made before any agent starts so that
 * it is covered: a later run executes what it finds there (with the public pinned integrity) as the
 * harness, and the tool cache is the runner user's, the agent's own uid as a normal user.
 */
function toolCacheBinaries(env: NodeJS.ProcessEnv): string[] {
  if (!env.RUNNER_TOOL_CACHE) return [];
  const dir = join(env.RUNNER_TOOL_CACHE, TOOL_NAME);
  try {
    mkdirSync(dir, { recursive: true });
  } catch {
    // A tool cache the harness's user cannot write, its agent cannot write either.
  }
  return [dir];
}

/**
 * The wrappers of a side's agent processes: the bubblewrap sandbox for agent.setup, each
 * agent.command episode and agent.serve (tunnelled, sandbox-serve.ts) when it runs here, else the
 * unshare namespaces for all three.
 */
function sideWrappers(opts: SideOptions): {
  run?: CommandWrapper;
  /** The side's sandbox, which agent.serve runs in too. */
  sandbox?: SideSandbox;
  close(): Promise<void>;
} {
  const isolation = opts.isolation;
  if (isolation?.mode !== 'namespaces') return { close: async () => undefined };
  const runnerTemp = opts.harnessEnv.RUNNER_TEMP;
  const toolCache = toolCacheBinaries(opts.harnessEnv);
  const hide = () => [
    ...(opts.hide ?? []),
    ...privatePaths(),
    ...(runnerTemp ? [runnerTemp] : []),
    ...toolCache,
  ];
  if (!isolation.sandbox) {
    const namespaces = isolation.unshare
      ? namespaceWrapper(() =>
          harnessNamespaceOptions(opts.checkout.dir, hide(), isolation.unshare, isolation.setpriv),
        )
      : undefined;
    return { run: namespaces, close: async () => undefined };
  }
  const sandbox = new SideSandbox({
    checkout: opts.checkout.dir,
    hide,
    status: isolation.sandbox,
    network: opts.network ?? 'own',
  });
  return { run: sandbox, sandbox, close: () => sandbox.close() };
}

/**
 * agent.serve in the side's sandbox: the harness POSTs to agent.url (its port free on this machine,
 * `{port}` filled as for a process), served by a listener of its own that carries each connection
 * to the same port inside the sandbox; each episode's URLs are forwarded in first.
 */
async function startSandboxServer(
  side: Side,
  sandbox: SideSandbox,
  agent: AgentConfig,
  checkout: Checkout,
  env: Record<string, string>,
  logFile: string,
): Promise<{ server: AgentServer; front: ServeFront }> {
  const filled = await sidePort(side, agent, env);
  const target = new URL(filled.url);
  // Refused as for a process: a URL that answers before serve started is not this side's server.
  await refuseAnswering(target, filled.url);
  const port = insideTarget(filled.url).port;
  const serveOpts = {
    serve: agent.serve!,
    cwd: checkout.dir,
    env: filled.env,
    logFile,
    graceMs: DEFAULT_GRACE_MS,
    port,
  };
  const front = await ServeFront.open(filled.url, () => new SandboxServe(sandbox, serveOpts), port);
  const server = await startAgentServer({
    serve: agent.serve,
    url: front.url,
    cwd: checkout.dir,
    env: filled.env,
    logFile,
    startServe: () => front.start(),
  }).catch(async (err) => {
    await front.close();
    throw err;
  });
  return { server, front };
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
    buildAgentEnv({
      harnessEnv: opts.harnessEnv,
      env: agent.env,
      passEnv: agent.pass_env,
      strings: {
        'agent.command': agent.command,
        'agent.serve': agent.serve,
        'agent.setup': agent.setup,
        'agent.url': agent.url,
        // The registry the harness pulls from hears the image name.
        'agent.image': agent.image,
      },
      judgeKeyEnv: opts.judgeKeyEnv,
      modelKeyEnvs: opts.modelKeyEnvs,
      episode: vars,
    });
  // Refused before anything of the side runs or is pulled, not at its first episode.
  baseEnv();
  if (agent.isolation === 'container') return prepareContainerSide(opts, baseEnv);
  // Made only for sides that run here: a sandbox holds a socket open until the side stops.
  const wrappers = sideWrappers(opts);
  const wrapper = wrappers.run;

  if (agent.setup) {
    opts.onLog?.(`${side}: running setup: ${agent.setup}`);
    const res = await runSetup(agent.setup, checkout.dir, baseEnv(), 15 * 60_000, { wrapper });
    if (!res.ok) {
      // As root the setup is nobody: installing into a root-owned checkout fails, and should say why.
      const asNobody =
        opts.isolation?.mode === 'namespaces' &&
        (opts.isolation.asRoot || opts.isolation.sandbox?.via === 'sudo')
          ? `\n(agent.setup ran as uid ${AGENT_UID}, which cannot write to a checkout it does not own: run stategate as a normal user with --sudo never (action input sudo: never), make ${checkout.dir} writable for uid ${AGENT_UID}, or use agent.isolation: container; see docs/isolation.md)`
          : '';
      await wrappers.close();
      throw new Error(
        `${side}: agent.setup '${agent.setup}' failed (exit ${res.exitCode}):\n${res.output.slice(-2000)}${asNobody}`,
      );
    }
  }

  if (agent.url) {
    const logFile = join(opts.outDir, `agent-server-${side}.log`);
    // On the machine's network (agent.network: host) the harness reaches the server's port itself.
    if (wrappers.sandbox && agent.serve !== undefined && opts.network !== 'host') {
      const { server, front } = await startSandboxServer(
        side,
        wrappers.sandbox,
        agent,
        checkout,
        baseEnv(),
        logFile,
      ).catch(async (err) => {
        await wrappers.close();
        throw err;
      });
      opts.onLog?.(`${side}: agent server (in its sandbox) on ${front.url}`);
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
        stop: () =>
          server
            .stop()
            .then(() => front.close())
            .finally(() => wrappers.close()),
      };
    }
    const { url, env } = await sidePort(side, agent, baseEnv());
    if (url !== agent.url) opts.onLog?.(`${side}: agent server on ${url}`);
    const server: AgentServer = await startAgentServer({
      serve: agent.serve,
      url,
      cwd: checkout.dir,
      env,
      logFile,
      wrapper: wrappers.run,
    });
    return {
      side,
      checkout,
      agent,
      logFile,
      runAgent: (req) => server.runEpisode(req),
      stop: () => server.stop().finally(() => wrappers.close()),
    };
  }

  const command = agent.command!;
  // Each episode's sandbox is started while the one before runs (after agent.setup, which may
  // change what the sandbox mounts): an episode waits only for its runner to read its spec.
  wrappers.sandbox?.keepReady(1, baseEnv());
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
        wrapper,
        conversation: req.conversation,
      }),
    stop: () => wrappers.close(),
  };
}

/** agent.url with `{port}` filled by a free port of this side's own, and PORT set for its serve. */
async function sidePort(
  side: Side,
  agent: AgentConfig,
  env: Record<string, string>,
): Promise<{ url: string; env: Record<string, string> }> {
  const url = agent.url!;
  if (!hasPortPlaceholder(url)) return { url, env };
  if (agent.serve === undefined) {
    throw new AgentStartError(
      `${side}: agent.url ${url} has {port}, which only a server Stategate starts can listen on: add agent.serve, or write the port of the server you started`,
    );
  }
  const host = urlHost(url);
  if (host === null) throw new AgentStartError(`${side}: agent.url ${JSON.stringify(url)} is not a URL`);
  const port = await freePort(host);
  return { url: fillPort(url, port), env: { ...env, PORT: String(port) } };
}
