// One resource scope per run: whatever a run opens (checkouts, the engine, the gateway, the sides'
// agents, the episode log) registers its release here, and the scope releases all of it, newest
// first, however the run ends. A release may also be started sooner, by what registered it (the
// engine once the last episode has ended); it still runs once, and close() waits for it.

export class ResourceScope {
  private readonly releases: (() => Promise<void>)[] = [];

  /**
   * Registers a release; it runs when the scope closes, after everything registered later. Returns
   * the release as a function that starts it now (at most once; failures are the scope's to ignore)
   * and resolves when it has ended.
   */
  defer(release: () => Promise<void>): () => Promise<void> {
    let running: Promise<void> | undefined;
    const once = () => {
      running ??= release().catch(() => undefined);
      return running;
    };
    this.releases.push(once);
    return once;
  }

  /** Releases everything, newest first; a failing release does not stop the others. */
  async close(): Promise<void> {
    while (this.releases.length > 0) await this.releases.pop()!();
  }
}
