// SIGINT/SIGTERM during a run: the first signal stops new episodes, kills running agents and lets
// the run write its partial ("interrupted") report and clean up; a second signal exits at once.
import { claimSignals } from '../sandbox/process-exit.js';

const listeners = new Set<() => void>();
let installed = false;
let received = 0;
let lastSignal: NodeJS.Signals | null = null;

function handle(signal: NodeJS.Signals): void {
  received++;
  lastSignal = signal;
  if (received > 1 || listeners.size === 0) {
    process.exit(signal === 'SIGINT' ? 130 : 143);
  }
  process.stderr.write(
    `\nstategate: ${signal} received: stopping, cleaning up and writing a partial report\n`,
  );
  for (const l of listeners) l();
}

/** Calls `abort` on the first SIGINT/SIGTERM while registered; returns the unregister function. */
export function onInterrupt(abort: () => void): () => void {
  if (!installed) {
    installed = true;
    process.on('SIGINT', handle);
    process.on('SIGTERM', handle);
    // This handler ends the process: the engines' cleanup must not re-raise the signal first.
    claimSignals();
  }
  listeners.add(abort);
  return () => {
    listeners.delete(abort);
  };
}

/** The exit status for the signal that interrupted this process (130 SIGINT, 143 SIGTERM), or null. */
export function interruptExitCode(): number | null {
  if (!lastSignal) return null;
  return lastSignal === 'SIGINT' ? 130 : 143;
}
