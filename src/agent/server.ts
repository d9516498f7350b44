// The agent-server adapter (docs/agent-protocol.md): agent.url receives one POST per episode; agent.serve,
// when given, starts that server once per side and restarts it once if it dies.
import type http from 'node:http';
import type { ConversationDriver } from '../conversation/driver.js';
import type { AgentRun } from '../model/episode.js';
import { DEFAULT_MAX_OUTPUT_BYTES } from './capture.js';
import { conversationAgent, type PostOutcome, postJson, tryConnect } from './http-client.js';
import type { CommandWrapper } from './namespace.js';
import { DEFAULT_GRACE_MS } from './process-group.js';
import { parseAgentResult, snippet } from './result.js';
import { checkCwd } from './run-process.js';
import { AgentStartError, appendLog, describeExit, ServeProcess } from './serve-process.js';
import { converseOverHttp } from './server-conversation.js';
import type { AgentInput, EpisodeVars } from './types.js';
import { within } from './within.js';

export { AgentStartError } from './serve-process.js';

const DEFAULT_HEALTH_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 2000;
// A request may fail a moment before the exit of the server that dropped it is reported.
const EXIT_NOTICE_MS = 1000;

export interface AgentServerOptions {
  /** agent.serve: the command that starts the server; without it agent.url must already be up. */
  serve?: string;
  /** agent.url. */
  url: string;
  cwd: string;
  /** From baseAgentEnv: no episode variables (those go in each POST). */
  env: Record<string, string>;
  /** Where the server's stdout and stderr are appended. */
  logFile: string;
  healthTimeoutMs?: number;
  graceMs?: number;
  /** The largest response body read (default 1 MiB). */
  maxResponseBytes?: number;
  /** Runs agent.serve in namespaces of its own, which live as long as the server (see namespace.ts). */
  wrapper?: CommandWrapper;
  /** Starts serve some other way than as a local process group (agent.isolation: container). */
  startServe?: () => ServeHandle;
}

/** What the server needs of a started agent.serve: ServeProcess, or its container twin. */
export type ServeHandle = Pick<ServeProcess, 'exit' | 'exited' | 'waitHealthy' | 'stop'>;

export interface EpisodeRequest {
  input: AgentInput;
  vars: EpisodeVars;
  timeoutMs: number;
  signal?: AbortSignal;
  /** A conversation scenario: one POST per agent turn, the driver answering each. */
  conversation?: ConversationDriver;
}

/** A running agent server, ready for episodes. */
export interface AgentServer {
  readonly url: string;
  readonly logFile: string;
  /** How often the server was restarted after it died (at most once). */
  readonly restarts: number;
  /**
   * POSTs one episode and reads the result from the response. Never throws. `exitCode` is 0 when the
   * server answered 2xx and null otherwise, so `completed` reads the same as for a command agent.
   */
  runEpisode(request: EpisodeRequest): Promise<AgentRun>;
  /**
   * Resolves once a restart in progress has ended (at once when none is): what reaches into the
   * server before its POST (the episode's forwarded URLs) must reach the new one, not the dead one.
   */
  settled(): Promise<void>;
  /** Stops the server started by serve (nothing to do without serve). */
  stop(): Promise<void>;
}

/** The POST body: the stdin object plus the episode's identifiers (docs/agent-protocol.md). */
export function episodeBody(input: AgentInput, vars: EpisodeVars): Record<string, unknown> {
  return {
    message: input.message,
    context: input.context,
    tools_url: vars.toolsUrl,
    mcp_url: vars.mcpUrl,
    episode: vars.episode,
    scenario: vars.scenario,
    seed: vars.seed,
    side: vars.side,
    ...(vars.databaseUrl === undefined ? {} : { database_url: vars.databaseUrl }),
    // A server outlives its episodes: each request carries its episode's model URLs and key.
    ...(vars.modelEnv && Object.keys(vars.modelEnv).length > 0 ? { models: { ...vars.modelEnv } } : {}),
  };
}

class ServerExited extends Error {}

/** Throws when something answers at agent.url's origin before its serve started: not this side's server. */
export async function refuseAnswering(target: URL, url: string): Promise<void> {
  if ((await tryConnect(target, CONNECT_TIMEOUT_MS)) !== null) return;
  throw new AgentStartError(
    `something already listens on ${target.origin} (agent.url ${url}) before agent.serve started: stop it, or use {port} in agent.url so that each side's server gets a free port`,
  );
}

function failedRun(resultError: string, durationMs = 0): AgentRun {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    durationMs,
    stdout: '',
    stderr: '',
    truncated: false,
    resultError,
  };
}

class RunningAgentServer implements AgentServer {
  restarts = 0;
  private proc: ServeHandle | null = null;
  private restarting: Promise<void> | null = null;
  /** Why no further episode can run, once that is so. */
  private down: string | null = null;
  private readonly inFlight = new Set<AbortController>();
  private stopping = false;

  constructor(
    private readonly opts: AgentServerOptions,
    private readonly target: URL,
    private readonly graceMs: number,
  ) {}

  get url(): string {
    return this.opts.url;
  }

  get logFile(): string {
    return this.opts.logFile;
  }

  /** Starts serve and waits until it accepts connections; only then are its exits watched. */
  async launch(): Promise<void> {
    const { serve, cwd, env, logFile } = this.opts;
    // Whatever answers before serve started is not this side's server: its episodes would reach it.
    // (A container's front is Stategate's own listener, opened for that server alone.)
    if (!this.opts.startServe) await refuseAnswering(this.target, this.opts.url);
    let proc: ServeHandle;
    try {
      proc =
        this.opts.startServe?.() ??
        ServeProcess.start(serve!, cwd, env, logFile, this.graceMs, this.opts.wrapper);
    } catch (err) {
      throw new AgentStartError(`agent.serve cannot start: ${(err as Error).message}`);
    }
    this.proc = proc;
    await proc.waitHealthy(this.target, this.opts.healthTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS);
    void proc.exited.then(() => this.onExit(proc));
  }

  private onExit(proc: ServeHandle): void {
    if (this.stopping || proc !== this.proc) return;
    const what = `agent server exited (${describeExit(proc.exit!)})`;
    for (const controller of this.inFlight) controller.abort(new ServerExited(what));
    if (this.restarts >= 1) {
      this.down = `${what} after it had been restarted once; see ${this.logFile}`;
      return;
    }
    this.restarts++;
    appendLog(this.logFile, 'restarting the agent server (once)');
    // What the dead server started must be gone first, or its port would look taken.
    this.restarting = proc
      .stop()
      .then(() => this.launch())
      .catch((err: Error) => {
        this.down = `${what} and could not be restarted: ${err.message}`;
      })
      .finally(() => {
        this.restarting = null;
      });
  }

  async settled(): Promise<void> {
    if (this.restarting) await this.restarting;
  }

  async runEpisode(request: EpisodeRequest): Promise<AgentRun> {
    const body = episodeBody(request.input, request.vars);
    if (!request.conversation) return this.postEpisode(request, body, request.timeoutMs);
    const connection = conversationAgent(this.target);
    try {
      return await converseOverHttp(request, request.conversation, body, (turnBody, timeoutMs) =>
        this.postEpisode(request, turnBody, timeoutMs, connection),
      );
    } finally {
      connection.destroy();
    }
  }

  /** POSTs one body (an episode, or one turn of it) and reads the result; never throws. */
  private async postEpisode(
    request: EpisodeRequest,
    body: Record<string, unknown>,
    timeoutMs: number,
    connection?: http.Agent,
  ): Promise<AgentRun> {
    if (request.signal?.aborted) return failedRun('the run was cancelled before the request was sent');
    // Time spent waiting for a restart is not the episode's.
    if (this.restarting) await this.restarting;
    if (this.down) return failedRun(this.down);
    if (this.stopping) return failedRun('the agent server was stopped');

    const proc = this.proc;
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    request.signal?.addEventListener('abort', onAbort, { once: true });
    this.inFlight.add(controller);
    const started = performance.now();
    const outcome = await postJson(this.target, body, {
      timeoutMs,
      maxBytes: this.opts.maxResponseBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
      signal: controller.signal,
      ...(connection ? { agent: connection } : {}),
    });
    const durationMs = Math.round(performance.now() - started);
    this.inFlight.delete(controller);
    request.signal?.removeEventListener('abort', onAbort);

    const run: AgentRun = {
      exitCode: null,
      signal: null,
      timedOut: outcome.timedOut,
      durationMs,
      stdout: outcome.body.text(),
      stderr: '',
      truncated: outcome.body.truncated,
    };
    const reason = controller.signal.reason;
    if (reason instanceof ServerExited) {
      run.resultError = `${reason.message} during the episode; see ${this.logFile}`;
    } else if (outcome.aborted) {
      run.resultError = 'the run was cancelled';
    } else if (outcome.timedOut) {
      run.resultError = `the agent server did not answer within ${timeoutMs} ms`;
    } else if (outcome.error !== undefined) {
      run.resultError = await this.describeConnectionError(outcome, proc);
    } else {
      this.readResponse(outcome, run);
    }
    return run;
  }

  private async describeConnectionError(outcome: PostOutcome, proc: ServeHandle | null): Promise<string> {
    const exit = proc ? await within(proc.exited, EXIT_NOTICE_MS) : undefined;
    if (exit) return `agent server exited (${describeExit(exit)}) during the episode; see ${this.logFile}`;
    return `could not reach the agent server at ${this.url}: ${outcome.error}`;
  }

  private readResponse(outcome: PostOutcome, run: AgentRun): void {
    const status = outcome.status ?? 0;
    if (status < 200 || status > 299) {
      run.resultError = `the agent server answered HTTP ${status}: ${snippet(outcome.body.text())}`;
      return;
    }
    run.exitCode = 0;
    if (outcome.body.truncated) {
      run.resultError = `the response body is larger than ${outcome.body.maxBytes} bytes`;
      return;
    }
    const reading = parseAgentResult(outcome.body.text(), 'the response body');
    if (reading.result) run.result = reading.result;
    else run.resultError = reading.resultError;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    // Stopping the current process first makes a restart in progress fail fast.
    await this.proc?.stop();
    await this.restarting;
  }
}

function parseUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AgentStartError(`agent.url ${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new AgentStartError(`agent.url ${url} must be http:// or https://`);
  }
  return parsed;
}

/** Starts agent.serve (when given) and waits until agent.url accepts connections; throws AgentStartError. */
export async function startAgentServer(opts: AgentServerOptions): Promise<AgentServer> {
  const target = parseUrl(opts.url);
  const server = new RunningAgentServer(opts, target, opts.graceMs ?? DEFAULT_GRACE_MS);
  if (opts.serve === undefined) {
    const error = await tryConnect(target, CONNECT_TIMEOUT_MS);
    if (error !== null) {
      throw new AgentStartError(
        `agent.url ${opts.url} does not accept connections (${error}), and no agent.serve starts it`,
      );
    }
    return server;
  }
  const cwdProblem = await checkCwd(opts.cwd);
  if (cwdProblem) throw new AgentStartError(`agent.serve cannot start: ${cwdProblem}`);
  await server.launch();
  return server;
}
