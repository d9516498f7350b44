// SIGINT/SIGTERM during a run: the first signal stops new episodes, kills running agents and lets
// the run write its partial ("interrupted") report and clean up; a second signal exits at once.
const listeners = new Set<() => void>();
let installed = false;
let received = 0;

function handle(signal: NodeJS.Signals): void {
  received++;
  if (received > 1 || listeners.size === 0) {
    process.exit(signal === 'SIGINT' ? 130 : 143);
  }
  process.stderr.write(`\nstategate: ${signal} received: stopping, cleaning up and writing a partial report\n`);
  for (const l of listeners) l();
}

/** Calls `abort` on the first SIGINT/SIGTERM while registered; returns the unregister function. */
export function onInterrupt(abort: () => void): () => void {
  if (!installed) {
    installed = true;
    process.on('SIGINT', handle);
    process.on('SIGTERM', handle);
  }
  listeners.add(abort);
  return () => {
    listeners.delete(abort);
  };
}

/** Whether a signal interrupted this process (the CLI exits 130/143 after writing its report). */
export function interruptedBy(): number {
  return received;
}
