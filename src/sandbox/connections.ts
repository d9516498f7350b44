// How many connections a run may hold on its server. A shared server allows max_connections in
// all (the postgres engine's usually 100), others use some of them, and a run at concurrency 64 or
// 128 would ask for more than are left: every connection of an episode or a put-back takes a slot
// first and waits for one when none is free, so the run slows down instead of failing with "too
// many clients". Pooled databases hold no connection while idle (template.ts), and when the run
// may need more connections than the budget (reserve()), an episode's idle connection closes soon
// after its query instead of staying for the agent's next call.
import pg from 'pg';

/** Connections left to other sessions of a shared server while a run goes on. */
const HEADROOM = 0.1;
/** Fewest connections a run can work with: one episode's and one put-back's (admin and owner). */
export const MIN_CONNECTIONS = 4;
/** How long an episode's idle connection stays open when connections are scarce. */
const SCARCE_IDLE_MS = 100;

/** A counting semaphore: `limit` slots, handed out first come, first served. */
export class Slots {
  private used = 0;
  private readonly queue: (() => void)[] = [];

  constructor(readonly limit: number) {}

  /** Slots held now, and takers waiting for one. */
  get stats(): { used: number; waiting: number } {
    return { used: this.used, waiting: this.queue.length };
  }

  /** Takes a slot, waiting for one when all are held. */
  acquire(): Promise<void> {
    if (this.used < this.limit) {
      this.used++;
      return Promise.resolve();
    }
    this.onFull();
    // The slot passes straight from release() to the first waiter.
    return new Promise((resolve) => this.queue.push(resolve));
  }

  release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.used--;
  }

  /** Called when a taker has to wait. */
  protected onFull(): void {}
}

/** The connections this run may hold at once (besides its admin pool). */
export class ConnectionBudget extends Slots {
  /** Whether the run keeps more databases than it may hold connections. */
  scarce = false;

  /** Says how many connections the run may hold at once; past the budget, idle ones close soon. */
  expect(connections: number): void {
    this.scarce = connections > this.limit;
  }

  // The estimate was short (others took connections, an episode used several): from now on idle
  // connections close soon, so a waiting connect does not wait out a long idle timeout again.
  protected override onFull(): void {
    this.scarce = true;
  }

  /** How long an idle connection of an episode stays open (pg.Pool's idleTimeoutMillis). */
  get idleMs(): number {
    return this.scarce ? SCARCE_IDLE_MS : 10_000;
  }
}

/**
 * The budget of a server, read through its admin: what max_connections leaves after the superuser
 * reserve, the sessions open now (others' and the admin's), the admin pool's own `adminPool`
 * connections and a headroom for others. Throws, saying so, when too little is left.
 */
export async function readConnectionBudget(
  admin: pg.Pool,
  adminPool: number,
  server: string,
): Promise<ConnectionBudget> {
  const r = await admin.query<{ max: number; reserved: number; open: number }>(
    `SELECT current_setting('max_connections')::int AS max,
            current_setting('superuser_reserved_connections')::int AS reserved,
            (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int AS open`,
  );
  const { max, reserved, open } = r.rows[0];
  // The admin pool's first connection is open already (it asked).
  const own = adminPool - 1 + Math.ceil(HEADROOM * max);
  const limit = max - reserved - open - own;
  if (limit < MIN_CONNECTIONS) {
    throw new Error(
      `the database server at ${server} allows ${max} connections (${reserved} of them kept for superusers) and ` +
        `${open} are open: a run needs ${MIN_CONNECTIONS + own} more (its admin pool, ${MIN_CONNECTIONS} for ` +
        'episodes and put-backs, 10% of max_connections left to others); raise max_connections or end other sessions',
    );
  }
  return new ConnectionBudget(limit);
}

/**
 * A pg.Client class whose connections take a slot of `budget` before connecting and give it back
 * when the connection ends (or fails to open).
 */
export function budgetedClient(budget: ConnectionBudget): typeof pg.Client {
  let made = clients.get(budget);
  if (!made) {
    made = clientClass(budget);
    clients.set(budget, made);
  }
  return made;
}

const clients = new WeakMap<ConnectionBudget, typeof pg.Client>();

function clientClass(budget: ConnectionBudget): typeof pg.Client {
  return class BudgetedClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      // pg.Pool listens for errors only from its connect callback on, which this class calls a few
      // promise turns after the server's ReadyForQuery. When the server's next message is already in
      // the same read (a backend terminated by a DROP DATABASE ... WITH (FORCE) just as it started,
      // on a busy machine), the error is emitted before anyone listens and would end the process.
      // An error with a query in flight still rejects that query; an idle one needs no handling
      // here: the pool or the caller sees the connection ended.
      this.on('error', () => undefined);
    }

    // pg.Pool connects with a callback, everything else awaits the promise.
    override connect(): Promise<pg.Client>;
    override connect(callback: (err: Error | null, c?: pg.Client) => void): void;
    override connect(callback?: (err: Error | null, c?: pg.Client) => void): Promise<pg.Client> | undefined {
      const opened = this.openWithSlot().then(() => this as pg.Client);
      if (!callback) return opened;
      opened.then(
        (c) => callback(null, c),
        (e: Error) => callback(e),
      );
      return undefined;
    }

    private async openWithSlot(): Promise<void> {
      await budget.acquire();
      let held = true;
      const free = () => {
        if (!held) return;
        held = false;
        budget.release();
      };
      this.once('end', free);
      try {
        await super.connect();
      } catch (e) {
        free();
        throw e;
      }
    }
  };
}
