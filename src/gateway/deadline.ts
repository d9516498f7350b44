// An episode's deadline as the gateway sees it: one signal that aborts when the agent's timeout
// passes or the run is interrupted, so a session cuts off requests that would outlive the episode.

export interface EpisodeDeadline {
  /** Pass as SessionSpec.deadline; its reason says which end came first. */
  readonly signal: AbortSignal;
  /** Starts the clock (when the agent starts). */
  start(timeoutMs: number): void;
  /** The episode is over: no timer or listener is left behind. */
  clear(): void;
}

/** A deadline that also follows `outer` (the run's interrupt signal), if given. */
export function episodeDeadline(outer?: AbortSignal): EpisodeDeadline {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const onOuter = () => controller.abort('the run was interrupted');
  if (outer?.aborted) onOuter();
  else outer?.addEventListener('abort', onOuter, { once: true });
  return {
    signal: controller.signal,
    start(timeoutMs) {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(`the agent's timeout (${timeoutMs} ms) passed`), timeoutMs);
    },
    clear() {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuter);
    },
  };
}
