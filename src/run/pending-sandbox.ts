// An episode's database while it is still being prepared (clone, scenario state, markInitial):
// the gateway session opens on it and the agent starts at once, and the agent's first tool call
// waits for the database instead of the whole episode waiting before the agent starts. Nothing
// reaches the database before it is ready: every method waits for the preparation, and one that
// failed fails every method (the episode is then an infra error of stage 'sandbox', episode.ts).
import type { RowChange, StateDiff } from '../model/episode.js';
import type { QueryRows, Sandbox, SqlSession } from '../sandbox/types.js';

/** Thrown by a PendingSandbox's methods when its database could not be prepared. */
export class DatabaseNotReadyError extends Error {
  constructor(cause: unknown) {
    super(
      `the episode's database could not be prepared: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
    this.name = 'DatabaseNotReadyError';
  }
}

/**
 * A Sandbox that waits for `ready` before each use. `onFirstUse` hears once how long the first use
 * waited for the database (0 when it was ready by then).
 */
export class PendingSandbox implements Sandbox {
  private db: Sandbox | null = null;
  private used = false;

  constructor(
    private readonly ready: Promise<Sandbox>,
    private readonly onFirstUse: (waitedMs: number) => void = () => undefined,
  ) {
    ready.then(
      (db) => {
        this.db = db;
      },
      () => undefined,
    );
  }

  // Names are known only once the database is: nothing of the harness reads them before.
  get name(): string {
    return this.now().name;
  }

  get url(): string {
    return this.now().url;
  }

  query(sql: string, params?: unknown[]): Promise<QueryRows> {
    return this.use().then((db) => db.query(sql, params));
  }

  transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<{ value: T; changes: RowChange[] }> {
    return this.use().then((db) => db.transaction(fn));
  }

  readOnly(
    sql: string,
    timeoutMs?: number,
  ): Promise<{ rows: Record<string, unknown>[]; fields: { name: string; type: string }[] }> {
    return this.use().then((db) => db.readOnly(sql, timeoutMs));
  }

  markInitial(): Promise<void> {
    return this.use().then((db) => db.markInitial());
  }

  captureDiff(): Promise<StateDiff> {
    return this.use().then((db) => db.captureDiff());
  }

  exposeUrl(): Promise<string> {
    return this.use().then((db) => db.exposeUrl());
  }

  /** Disposes the database once it is made; one that failed was disposed by its preparation. */
  dispose(): Promise<void> {
    return this.ready.then(
      (db) => db.dispose(),
      () => undefined,
    );
  }

  private now(): Sandbox {
    if (!this.db) throw new Error("the episode's database is still being prepared");
    return this.db;
  }

  /** The database once ready; the first use says how long it waited. */
  private async use(): Promise<Sandbox> {
    const first = !this.used;
    this.used = true;
    if (this.db) {
      if (first) this.onFirstUse(0);
      return this.db;
    }
    const t0 = performance.now();
    try {
      return await this.ready;
    } catch (err) {
      throw new DatabaseNotReadyError(err);
    } finally {
      if (first) this.onFirstUse(Math.round((performance.now() - t0) * 100) / 100);
    }
  }
}
