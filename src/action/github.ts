// The GitHub API client: the only place the token is used. Retries server errors, waits out rate limits.
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';

export type GitHub = InstanceType<typeof Octokit>;

const RetryingOctokit = Octokit.plugin(retry, throttling);

/** Creates a client for the API at baseUrl (GITHUB_API_URL), logging rate-limit waits through `warn`. */
export function createGitHub(token: string, baseUrl: string, warn: (message: string) => void): GitHub {
  return new RetryingOctokit({
    auth: token,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    userAgent: 'stategate-action',
    // Octokit's own request log would print every 4xx we handle on purpose (403 on forks).
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    throttle: {
      onRateLimit: (retryAfter, options, _octokit, retryCount) => {
        warn(`GitHub rate limit on ${options.method} ${options.url}; retrying in ${retryAfter}s`);
        return retryCount < 2;
      },
      onSecondaryRateLimit: (retryAfter, options, _octokit, retryCount) => {
        warn(`GitHub secondary rate limit on ${options.method} ${options.url}; retrying in ${retryAfter}s`);
        return retryCount < 1;
      },
    },
  });
}

/** The HTTP status of a failed API call, or null when the error did not come from a response. */
export function apiStatus(err: unknown): number | null {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : null;
}

/** Whether an API error means the token may not do this (read-only fork token, missing permission). */
export function isPermissionDenied(err: unknown): boolean {
  const status = apiStatus(err);
  return status === 403 || status === 404;
}
