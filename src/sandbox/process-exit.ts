// Process-level cleanup: a run that is interrupted (SIGINT, SIGTERM) or exits without closing its
// engines must leave no database, role, server or data directory behind.
// On a signal: close every live engine (bounded), then re-raise the signal so the process ends
// with the conventional status (128 + signal number), unless a handler claimed the signals
// (claimSignals: the run's interrupt handling, which writes a partial report), in which case ending
// the process is theirs to decide. Other listeners do not count: libraries such as signal-exit
// (loaded by testcontainers) listen too and themselves wait for being the last listener, so
// deferring to them would leave the process running. On 'exit' (nothing async can run): each
// engine's synchronous fallback.

/** What one engine registers. */
export interface ExitCleanup {
  /** Closes the engine (async; used on signals). */
  close(): Promise<void>;
  /** A synchronous last resort for the 'exit' event. */
  closeSync(): void;
}

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;
// DROP DATABASE waits for a checkpoint; on a busy shared server that alone can take many seconds.
const SIGNAL_GRACE_MS = 60_000;
const live = new Set<ExitCleanup>();
let claims = 0;

/** Says this process's own SIGINT/SIGTERM handler ends the process; returns the release function. */
export function claimSignals(): () => void {
  claims++;
  let released = false;
  return () => {
    if (!released) claims--;
    released = true;
  };
}
let handling = false;

async function onSignal(signal: NodeJS.Signals): Promise<void> {
  if (handling) return;
  handling = true;
  const all = Promise.allSettled([...live].map((c) => c.close()));
  await Promise.race([all, new Promise((r) => setTimeout(r, SIGNAL_GRACE_MS).unref())]);
  live.clear();
  uninstall();
  handling = false;
  if (claims === 0) process.kill(process.pid, signal);
}

function onExit(): void {
  for (const c of live) {
    try {
      c.closeSync();
    } catch {
      // Best effort: the next run's sweepLeftovers removes what is left.
    }
  }
  live.clear();
}

const handlers = new Map<string, (...args: any[]) => void>();

function install(): void {
  if (handlers.size > 0) return;
  for (const s of SIGNALS) handlers.set(s, () => void onSignal(s));
  handlers.set('exit', onExit);
  for (const [event, fn] of handlers) process.on(event as NodeJS.Signals, fn);
}

function uninstall(): void {
  for (const [event, fn] of handlers) process.removeListener(event, fn);
  handlers.clear();
}

/** Registers an engine's cleanup for SIGINT, SIGTERM and exit; returns the function that removes it. */
export function registerExitCleanup(cleanup: ExitCleanup): () => void {
  live.add(cleanup);
  install();
  return () => {
    live.delete(cleanup);
    if (live.size === 0 && !handling) uninstall();
  };
}
