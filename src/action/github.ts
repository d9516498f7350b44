// The GitHub API client: the only place the token is used. Retries server errors, waits out rate limits,
// and goes through the runner's proxy (HTTPS_PROXY / HTTP_PROXY, except hosts NO_PROXY names) as
// @actions/github does: @actions/http-client picks the proxy, undici's fetch sends through it.
import { HttpClient } from '@actions/http-client';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { fetch } from 'undici';

type ActionsGitHub = typeof import('@actions/github/lib/utils')['GitHub'];
export type GitHub = InstanceType<ActionsGitHub>;

/**
 * Creates a client for the API at baseUrl (GITHUB_API_URL), logging rate-limit waits through `warn`.
 * The proxy is chosen for baseUrl itself: loopback and NO_PROXY hosts are reached directly.
 */
export async function createGitHub(
  token: string,
  baseUrl: string,
  warn: (message: string) => void,
): Promise<GitHub> {
  // Loaded on first use, not at start: importing @actions/github parses the event payload, and the
  // action reads that payload itself first, so a bad one is reported with its path, not as a crash.
  const { GitHub, getOctokitOptions } = await import('@actions/github/lib/utils');
  const url = baseUrl.replace(/\/+$/, '');
  // @actions/github computes this once, for GITHUB_API_URL as it was when imported; this is the same
  // computation for the URL this client calls. Undefined when no proxy applies.
  const dispatcher = new HttpClient().getAgentDispatcher(url);
  const proxyFetch = (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) =>
    fetch(input, { ...init, dispatcher });
  const RetryingGitHub = GitHub.plugin(retry, throttling);
  return new RetryingGitHub(
    getOctokitOptions(token, {
      baseUrl: url,
      userAgent: 'stategate-action',
      request: { fetch: proxyFetch },
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
    }),
  );
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
