// One episode, start to end: clone, scenario state, gateway session, agent, capture, queries.
// Anything that fails outside the agent becomes `infraError` on the record (the case is then
// incomplete); what the agent does, however badly, is ordinary evidence.
import type { Expectation, Scenario, Tool } from '../config/schema.js';
import { durationMs, modelFaults, toolFaults } from '../config/schema.js';
import { ConversationDriver } from '../conversation/driver.js';
import { type UserPlayers, userPlayer } from '../conversation/players.js';
import { expectationSql } from '../expectations/registry.js';
import { episodeDeadline } from '../gateway/deadline.js';
import { provokedByCall } from '../gateway/run-tool.js';
import type { EpisodeSession, Gateway } from '../gateway/types.js';
import type {
  AgentRun,
  CallRecord,
  EpisodeRecord,
  InfraError,
  QueryResult,
  StateDiff,
} from '../model/episode.js';
import type { PlannedEpisode } from '../plan/expand.js';
import type { PinnedSuite } from '../plan/pin.js';
import { applyScenarioState, StateTimeoutError } from '../sandbox/index.js';
import type { Sandbox, Template } from '../sandbox/types.js';
import { PendingSandbox } from './pending-sandbox.js';
import { episodeModels, type RunModels } from './run-models.js';
import type { SideRuntime } from './side.js';

export interface EpisodeContext {
  template: Template;
  gateway: Gateway;
  tools: Map<string, Tool>;
  side: SideRuntime;
  expose: boolean;
  signal?: AbortSignal;
  /** The pinned suite: each record says which content it ran. */
  pin?: PinnedSuite;
  /** The run's model routes and spend, when the suite declares `models`. */
  models?: RunModels;
  /** Who plays a model-played user (user_simulator), and the run's cache that pins its turns. */
  players?: UserPlayers;
}

const EMPTY_DIFF: StateDiff = { tables: {}, fingerprints: {} };
const ignore = () => undefined;

function notRun(reason: string): AgentRun {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    durationMs: 0,
    stdout: '',
    stderr: '',
    truncated: false,
    resultError: reason,
  };
}

/** The SQL each expectation wants answered on the final state, keyed by expectation id. */
export function expectationQueries(expect: Expectation[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of expect) {
    const query = expectationSql(e);
    if (query) out[e.id] = query.sql;
  }
  return out;
}

function allowedTools(scenario: Scenario, tools: Map<string, Tool>): Tool[] {
  const names = scenario.tools ?? [...tools.keys()];
  return names.map((n) => tools.get(n)).filter((t): t is Tool => t !== undefined);
}

async function prepareSandbox(ctx: EpisodeContext, scenario: Scenario, label: string): Promise<Sandbox> {
  const sandbox = await ctx.template.clone(label);
  try {
    await applyScenarioState(
      sandbox,
      { rows: scenario.state.rows, sql: scenario.state.sql },
      ctx.template.tables,
      durationMs(ctx.side.agent.timeout),
    );
    await sandbox.markInitial();
    return sandbox;
  } catch (err) {
    void sandbox.dispose();
    const message = `scenario ${scenario.id} state (${scenario.file}): ${(err as Error).message}`;
    throw err instanceof StateTimeoutError ? new StateTimeoutError(message) : new Error(message);
  }
}

/** Runs one planned episode and returns everything it left behind. Never throws. */
export async function runEpisode(ctx: EpisodeContext, planned: PlannedEpisode): Promise<EpisodeRecord> {
  const { scenario } = planned;
  const timings: Record<string, number> = {};
  const clock = () => performance.now();
  let t = clock();
  const lap = (name: string) => {
    const now = clock();
    timings[name] = Math.round((now - t) * 100) / 100;
    t = now;
  };
  const record: EpisodeRecord = {
    episode: planned.id,
    scenario: scenario.id,
    side: planned.side,
    repeat: planned.repeat,
    seed: planned.seed,
    calls: [],
    refused: [],
    agent: notRun('not started'),
    diff: EMPTY_DIFF,
    queries: {},
    timings,
  };
  if (ctx.pin) record.pin = { suite: ctx.pin.suiteHash, scenario: ctx.pin.scenarios[scenario.id] };
  const fail = (stage: InfraError['stage'], err: unknown) => {
    record.infraError ??= { stage, message: err instanceof Error ? err.message : String(err) };
  };

  let session: EpisodeSession | undefined;
  // Requests to the gateway end with the episode: at the agent's timeout, or on interrupt.
  const deadline = episodeDeadline(ctx.signal);
  // Stops the agent when its database cannot be prepared: it would only wait for its timeout.
  const stop = new AbortController();
  const agentSignal = ctx.signal ? AbortSignal.any([ctx.signal, stop.signal]) : stop.signal;
  // The episode's databases are prepared while its agent starts (see PendingSandbox); a failure is
  // the episode's at once, before the error it gives the tool call that was waiting counts as one.
  const prepared = sandboxesFor(ctx, planned);
  prepared.catch((err: unknown) => {
    failSandbox(record, err);
    // After this turn: the tool call waiting for the database gets its error response first.
    setImmediate(() => stop.abort(err));
  });
  try {
    const stale = needsInitialState(scenario);
    let databases: Databases;
    if (ctx.expose) {
      // An exposed agent gets its database's URL at start: it waits for the database, as before.
      try {
        databases = await prepared;
      } catch {
        return record;
      }
    } else {
      databases = pendingDatabases(prepared, stale, (ms) => {
        timings.db_wait ??= ms;
      });
    }
    // What the episode waited for its database before its agent could be served: for a database
    // still being prepared, nothing (its first tool call waits instead: db_wait).
    lap('reset');

    const spent = ctx.models ? runBudgetSpent(ctx.models) : undefined;
    if (spent) {
      fail('budget', spent);
      return record;
    }
    const timeoutMs = durationMs(ctx.side.agent.timeout);
    // A conversation's driver numbers the turns; the gateway tags each call with the current one.
    let conversation: ConversationDriver | undefined;
    if (scenario.user) {
      try {
        conversation = new ConversationDriver(
          userPlayer(scenario, planned, ctx.players),
          scenario.user.max_turns,
        );
      } catch (err) {
        fail('user-simulator', err);
        return record;
      }
    }
    try {
      session = openSession(ctx, planned, databases, deadline.signal, timeoutMs, conversation);
    } catch (err) {
      fail('gateway', err);
      return record;
    }
    let databaseUrl: string | undefined;
    if (ctx.expose) {
      try {
        databaseUrl = await databases.sandbox.exposeUrl();
      } catch (err) {
        fail('sandbox', err);
        return record;
      }
    }
    lap('session');

    if (ctx.signal?.aborted) {
      fail('interrupted', 'the run was interrupted before this episode started');
      return record;
    }
    deadline.start(timeoutMs);
    try {
      record.agent = await runAgentIn(ctx, planned, session, {
        databaseUrl,
        timeoutMs,
        conversation,
        signal: agentSignal,
      });
    } catch (err) {
      fail('agent-start', err);
      return record;
    }
    // Its database never became ready: nothing the agent did counts (infraError says 'sandbox').
    let sandbox: Sandbox;
    try {
      ({ sandbox } = await prepared);
    } catch {
      return record;
    }
    if (conversation) {
      record.conversation = conversation.record();
      // The user could not answer: what the agent did next is no evidence about it.
      if (record.conversation.end === 'simulator_error')
        fail(
          'user-simulator',
          `the user simulator failed: ${record.conversation.error ?? 'no reason given'}`,
        );
    }
    timings.agent = Math.round(record.agent.durationMs * 100) / 100;
    t = clock();
    if (ctx.signal?.aborted) fail('interrupted', 'the run was interrupted while this episode ran');

    await collectCalls(record, session, fail, ctx.models !== undefined);
    session = undefined;
    lap('gateway_close');
    // The agent saw an error the twin never declares: what it did next is no evidence about it.
    const broken = record.calls.find((c) => c.harnessError !== undefined);
    if (broken) {
      fail('tool', harnessFailure(broken));
      const sqlstate = /^[A-Z_]+ \(SQLSTATE ([0-9A-Z]{5})\):/.exec(broken.harnessError!)?.[1];
      if (record.infraError?.stage === 'tool' && provokedByCall(sqlstate)) record.infraError.provoked = true;
    }

    try {
      record.diff = await sandbox.captureDiff();
    } catch (err) {
      fail('capture', err);
    }
    lap('capture');
    record.queries = await finalQueries(sandbox, scenario.expect, timeoutMs);
    lap('queries');
    return record;
  } catch (err) {
    fail('gateway', err);
    return record;
  } finally {
    deadline.clear();
    if (session) await session.close().catch(ignore);
    // Drops happen off the critical path; the engine awaits them on close(). The handler is not a
    // closure of this function: one would keep the whole record alive until the drop is done. A
    // database still being prepared is disposed once it is made.
    void prepared.then(disposeAll, ignore);
  }
}

/** The episode's databases: its own and, for a `stale_response` fault, one holding the initial state. */
interface Databases {
  sandbox: Sandbox;
  initialState?: Sandbox;
}

function disposeAll(databases: Databases): void {
  void databases.sandbox.dispose().catch(ignore);
  if (databases.initialState) void databases.initialState.dispose().catch(ignore);
}

/** Records why the episode's databases could not be prepared (once: the first infra error stays). */
function failSandbox(record: EpisodeRecord, err: unknown): void {
  if (record.infraError) return;
  record.infraError = { stage: 'sandbox', message: err instanceof Error ? err.message : String(err) };
  // The same state on every attempt: running it again would only wait as long again.
  if (err instanceof StateTimeoutError) record.infraError.timedOut = true;
}

/** Databases still being prepared, for the gateway: each use waits for them (and says how long). */
function pendingDatabases(
  prepared: Promise<Databases>,
  stale: boolean,
  onFirstUse: (waitedMs: number) => void,
): Databases {
  // Either database's first use is the first wait: both come from the one preparation.
  let heard = false;
  const once = (ms: number) => {
    if (heard) return;
    heard = true;
    onFirstUse(ms);
  };
  const sandbox = new PendingSandbox(
    prepared.then((d) => d.sandbox),
    once,
  );
  if (!stale) return { sandbox };
  const initialState = new PendingSandbox(
    prepared.then((d) => d.initialState!),
    once,
  );
  return { sandbox, initialState };
}

/** Whether the scenario needs a second database holding its initial state (a `stale_response` fault). */
function needsInitialState(scenario: Scenario): boolean {
  return scenario.faults.some((f) => f.fault === 'stale_response');
}

/** The infraError message of a call the harness failed: the error first, then what to do. */
function harnessFailure(call: CallRecord): string {
  return `${call.harnessError} (tool ${call.tool}, call ${call.seq}: an error inside the harness, not a declared not_found, precondition or errors entry; fix the twin's SQL, or declare the case with a precondition or under errors)`;
}

/**
 * The episode's database and, for a `stale_response` fault, a second one holding the initial
 * state. A scenario that starts from the template as it is takes a ready database from the pool
 * without a single await: when a whole wave starts together, no episode's reset then waits for the
 * others' turns on the one JavaScript thread.
 */
async function sandboxesFor(ctx: EpisodeContext, planned: PlannedEpisode): Promise<Databases> {
  const { scenario } = planned;
  const stale = needsInitialState(scenario);
  const plain =
    Object.keys(scenario.state.rows).length === 0 && (scenario.state.sql ?? []).length === 0 && !stale;
  const label = `${planned.side}-${planned.repeat}`;
  const sandbox = (plain ? ctx.template.take() : null) ?? (await prepareSandbox(ctx, scenario, label));
  if (!stale) return { sandbox };
  try {
    return { sandbox, initialState: await prepareSandbox(ctx, scenario, `${label}-initial`) };
  } catch (err) {
    void sandbox.dispose().catch(ignore);
    throw err;
  }
}

/** Why budget.run_usd lets no further episode start, or undefined while it does. */
function runBudgetSpent(models: RunModels): string | undefined {
  if (!models.spend.refuseStart()) return undefined;
  const { limitUsd, spentUsd } = models.spend;
  return `budget.run_usd (${limitUsd} USD) is spent (${spentUsd.toFixed(4)} USD recorded): this episode did not start`;
}

/** Runs the side's agent on the scenario's input with the episode's variables (and its conversation). */
function runAgentIn(
  ctx: EpisodeContext,
  planned: PlannedEpisode,
  session: EpisodeSession,
  run: {
    databaseUrl: string | undefined;
    timeoutMs: number;
    conversation: ConversationDriver | undefined;
    /** The run's interrupt and the episode's own stop (its database could not be prepared). */
    signal: AbortSignal;
  },
): Promise<AgentRun> {
  const { databaseUrl, timeoutMs, conversation, signal } = run;
  const { scenario } = planned;
  return ctx.side.runAgent({
    input: { message: scenario.input.message, context: scenario.input.context },
    vars: {
      toolsUrl: session.toolsUrl,
      mcpUrl: session.mcpUrl,
      episode: planned.id,
      scenario: scenario.id,
      seed: planned.seed,
      side: planned.side,
      databaseUrl,
      ...(ctx.models ? { modelEnv: session.modelEnv } : {}),
      ...(conversation ? { conversation: true } : {}),
    },
    timeoutMs,
    signal,
    conversation,
  });
}

/** The episode's gateway session: its tools with the scenario's faults, and its model routes. */
function openSession(
  ctx: EpisodeContext,
  planned: PlannedEpisode,
  databases: Databases,
  deadline: AbortSignal,
  timeoutMs: number,
  conversation: ConversationDriver | undefined,
): EpisodeSession {
  const { scenario } = planned;
  return ctx.gateway.open({
    episode: planned.id,
    scenario: scenario.id,
    side: planned.side,
    seed: planned.seed,
    tools: allowedTools(scenario, ctx.tools),
    suiteTools: [...ctx.tools.values()],
    faults: toolFaults(scenario.faults),
    sandbox: databases.sandbox,
    initialState: databases.initialState,
    deadline,
    ...(ctx.models ? { models: episodeModels(ctx.models, modelFaults(scenario.faults), timeoutMs) } : {}),
    ...(conversation ? { turn: () => conversation.turn } : {}),
  });
}

/**
 * Closes the episode's gateway session and keeps its record of tool and model calls. A model
 * provider the gateway could not reach, or a tool error the twin never declares, makes the episode
 * ungraded: what the agent did next is no evidence about it.
 */
async function collectCalls(
  record: EpisodeRecord,
  session: EpisodeSession,
  fail: (stage: InfraError['stage'], err: unknown) => void,
  withModels: boolean,
): Promise<void> {
  await session.close();
  record.calls = session.calls();
  // With models, an empty list is a record too: no call was made, whatever the agent claims.
  if (withModels) record.modelCalls = session.modelCalls();
  const unreachable = record.modelCalls?.find((c) => c.unreachable);
  if (unreachable)
    fail('gateway', `model call ${unreachable.seq} (${unreachable.provider}): ${unreachable.error}`);
  const broken = record.calls.find((c) => c.harnessError !== undefined);
  if (broken) {
    fail('tool', harnessFailure(broken));
    const sqlstate = /^[A-Z_]+ \(SQLSTATE ([0-9A-Z]{5})\):/.exec(broken.harnessError!)?.[1];
    if (record.infraError?.stage === 'tool' && provokedByCall(sqlstate)) record.infraError.provoked = true;
  }
}

/** Each expectation's query on the final state, under the episode's timeout. */
async function finalQueries(
  sandbox: Sandbox,
  expect: Expectation[],
  timeoutMs: number,
): Promise<Record<string, QueryResult>> {
  const out: Record<string, QueryResult> = {};
  for (const [id, sql] of Object.entries(expectationQueries(expect))) {
    out[id] = await readOnlyQuery(sandbox, sql, timeoutMs);
  }
  return out;
}

async function readOnlyQuery(sandbox: Sandbox, sql: string, timeoutMs: number): Promise<QueryResult> {
  try {
    const { rows, fields } = await sandbox.readOnly(sql, timeoutMs);
    return { sql, rows, fields };
  } catch (err) {
    return { sql, error: err instanceof Error ? err.message : String(err) };
  }
}
