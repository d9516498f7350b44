// One resource scope per run: whatever a run opens (checkouts, the engine, the gateway, the sides'
// agents, the episode log) registers its release here, and the scope releases all of it, newest
// first, however the run ends.

export class ResourceScope {
  private readonly releases: (() => Promise<void>)[] = [];

  /** Registers a release; it runs when the scope closes, after everything registered later. */
  defer(release: () => Promise<void>): void {
    this.releases.push(release);
  }

  /** Releases everything, newest first; a failing release does not stop the others. */
  async close(): Promise<void> {
    while (this.releases.length > 0) await this.releases.pop()!().catch(() => undefined);
  }
}
