// One listener on the run's interrupt signal for all its episodes. Each episode listens on a signal
// of its own (its deadline, its agent process, its agent server request), which this aborts with
// the run's: at `concurrency: 64` the run's signal would otherwise carry two listeners per episode
// in flight, and Node warns (MaxListenersExceededWarning) from the eleventh.

/** A signal that follows the run's, for one episode; `release` it when the episode is over. */
export interface EpisodeSignal {
  readonly signal: AbortSignal;
  release(): void;
}

/** Hands each episode a signal of its own that aborts, with the same reason, when `run` does. */
export class EpisodeSignals {
  private readonly live = new Set<AbortController>();

  constructor(readonly run: AbortSignal) {
    run.addEventListener(
      'abort',
      () => {
        for (const controller of this.live) controller.abort(run.reason);
        this.live.clear();
      },
      { once: true },
    );
  }

  /** A new episode's signal; already aborted when the run is. */
  open(): EpisodeSignal {
    const controller = new AbortController();
    if (this.run.aborted) controller.abort(this.run.reason);
    else this.live.add(controller);
    return { signal: controller.signal, release: () => this.live.delete(controller) };
  }
}
