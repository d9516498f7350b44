// One episode's state inside the gateway: its tools, its call record, its counters and idempotency
// keys, and the calls still in flight: close() waits for them a short grace, then cuts them off, and
// so does the episode's deadline at once.
import { setMaxListeners } from 'node:events';
import type { Tool } from '../config/schema.js';
import type { CallRecord } from '../model/episode.js';
import { type ArgumentCheck, argumentCheck } from './arguments.js';
import { IdempotencyStore } from './idempotency.js';
import { ModelSession } from './model-session.js';
import type { SessionSpec } from './types.js';

/** The state the call path reads and writes for one episode. */
export class SessionState {
  /** Tools the scenario allows, by name. */
  readonly tools = new Map<string, Tool>();
  /** Every tool of the suite, by name (a call to one not allowed gets 403 instead of 404). */
  readonly suiteTools = new Map<string, Tool>();
  readonly checks = new Map<string, ArgumentCheck>();
  readonly idempotency = new IdempotencyStore();
  /** The episode's model routes, key and model call record; absent without `models`. */
  readonly models: ModelSession | undefined;
  private readonly records: CallRecord[] = [];
  private readonly callNumbers = new Map<string, number>();
  private readonly inflight = new Set<Promise<unknown>>();
  private lastSeq = 0;
  /** The conversation's turn when each call arrived, by sequence number. */
  private readonly turnAt = new Map<number, number>();
  private closing: Promise<void> | undefined;
  private readonly cut = new AbortController();
  private readonly onDeadline = () =>
    this.cutOff(String(this.spec.deadline?.reason ?? "the episode's deadline passed"));

  /** Compiles every tool's argument check; throws on an invalid input schema or a missing initial state. */
  constructor(
    readonly token: string,
    readonly spec: SessionSpec,
  ) {
    if (spec.faults.some((f) => f.fault === 'stale_response') && !spec.initialState) {
      throw new Error(
        `episode ${spec.episode}: a stale_response fault needs the initial state, and SessionSpec.initialState is missing`,
      );
    }
    this.models = spec.models ? new ModelSession(spec.models, spec.seed) : undefined;
    for (const tool of spec.suiteTools ?? []) this.suiteTools.set(tool.name, tool);
    for (const tool of spec.tools) {
      this.tools.set(tool.name, tool);
      this.suiteTools.set(tool.name, tool);
      this.checks.set(tool.name, argumentCheck(tool));
    }
    // One listener per request in flight (hundreds at once are normal): no leak warning.
    setMaxListeners(0, this.cut.signal);
    if (spec.deadline?.aborted) this.onDeadline();
    else spec.deadline?.addEventListener('abort', this.onDeadline, { once: true });
  }

  /** Aborts when the session stops serving: in-flight requests end and are recorded as cut off. */
  get cutoff(): AbortSignal {
    return this.cut.signal;
  }

  /** Cuts off every request in flight and every later one; `reason` goes into their records. */
  cutOff(reason: string): void {
    if (!this.cut.signal.aborted) this.cut.abort(reason);
  }

  /** The next sequence number, in arrival order (1-based). */
  nextSeq(): number {
    const seq = ++this.lastSeq;
    const turn = this.spec.turn?.();
    if (turn !== undefined) this.turnAt.set(seq, turn);
    return seq;
  }

  /** Counts a call of `tool` that reached the fault check and returns its number (1-based). */
  nextCallNumber(tool: string): number {
    const n = (this.callNumbers.get(tool) ?? 0) + 1;
    this.callNumbers.set(tool, n);
    return n;
  }

  record(call: CallRecord): void {
    const turn = this.turnAt.get(call.seq);
    this.records.push(turn === undefined ? call : { ...call, turn });
  }

  /** The finished calls, in sequence order. */
  calls(): CallRecord[] {
    return [...this.records].sort((a, b) => a.seq - b.seq);
  }

  /** Keeps `work` in the in-flight set until it settles. */
  track<T>(work: Promise<T>): Promise<T> {
    this.inflight.add(work);
    const done = () => this.inflight.delete(work);
    work.then(done, done);
    return work;
  }

  /**
   * Resolves when every tracked request has settled: they get `graceMs` to finish, then the rest are
   * cut off (a tool already running in the database still finishes, so its changes are recorded).
   */
  close(graceMs: number): Promise<void> {
    this.closing ??= (async () => {
      // The deadline's listener would otherwise keep this session alive as long as the signal lives.
      this.spec.deadline?.removeEventListener('abort', this.onDeadline);
      if (this.inflight.size > 0 && !this.cut.signal.aborted) {
        let timer: NodeJS.Timeout | undefined;
        const grace = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, graceMs);
        });
        await Promise.race([Promise.allSettled([...this.inflight]), grace]);
        clearTimeout(timer);
        if (this.inflight.size > 0) this.cutOff('the episode ended');
      }
      while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    })();
    return this.closing;
  }
}
