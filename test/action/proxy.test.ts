// The GitHub client behind a proxy, as on a self-hosted runner with HTTPS_PROXY / HTTP_PROXY and
// NO_PROXY: a real loopback proxy in front of the loopback GitHub API.
//
// @actions/http-client (which picks the proxy) never proxies loopback hosts (localhost, 127.*,
// [::1]), so an API at http://127.0.0.1 would be reached directly and prove nothing. The API is
// therefore called by a name, api.github.test, that only the proxy resolves (to the loopback API):
// a call that arrives went through the proxy, and a call that bypasses the proxy fails to resolve
// the name. The loopback API is http://, so HTTP_PROXY is the variable that applies; for
// https://api.github.com it is HTTPS_PROXY, and the client tunnels the same way (CONNECT).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCheckRun } from '../../src/action/check-run.js';
import { createGitHub } from '../../src/action/github.js';
import { type GitHubApi, startGitHubApi } from '../helpers/github-api.js';
import { type LoopbackProxy, startProxy } from '../helpers/http-proxy.js';
import { actionCopy, runStep } from './runner.js';

const HOST = 'api.github.test';
const PROXY_VARS = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy'];
const target = { owner: 'acme', repo: 'refunds', headSha: 'c0ffee'.padEnd(40, '0'), name: 'stategate' };

let api: GitHubApi;
let proxy: LoopbackProxy;
let saved: Record<string, string | undefined>;
let apiByName: string;

beforeEach(async () => {
  api = await startGitHubApi({ owner: 'acme', repo: 'refunds' });
  proxy = await startProxy({ [HOST]: '127.0.0.1' });
  apiByName = api.url.replace('127.0.0.1', HOST);
  // The lower-case names win in @actions/http-client: a developer's own proxy settings must not leak in.
  saved = Object.fromEntries(PROXY_VARS.map((v) => [v, process.env[v]]));
  for (const v of PROXY_VARS) delete process.env[v];
});
afterEach(async () => {
  for (const [v, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[v];
    else process.env[v] = value;
  }
  expect(api.violations).toEqual([]);
  await proxy.close();
  await api.close();
});

describe('GitHub client behind a proxy', () => {
  it('sends every API call through HTTP_PROXY, token and all', async () => {
    process.env.HTTP_PROXY = proxy.url;
    const gh = await createGitHub('ghs_proxied', apiByName, () => {});
    const id = await startCheckRun(gh, target);
    await gh.rest.checks.update({
      owner: 'acme',
      repo: 'refunds',
      check_run_id: id,
      status: 'completed',
      conclusion: 'success',
    });
    expect(api.checkRuns).toHaveLength(1);
    expect(api.checkRuns[0]).toMatchObject({ id, status: 'completed', conclusion: 'success' });
    expect(api.requests.map((r) => r.token)).toEqual(['ghs_proxied', 'ghs_proxied']);
    expect(proxy.seen.length).toBeGreaterThan(0);
    expect(proxy.seen.every((s) => s.known && s.target === `${HOST}:${new URL(api.url).port}`)).toBe(true);
  });

  it('reads the lower-case http_proxy too', async () => {
    process.env.http_proxy = proxy.url;
    const gh = await createGitHub('ghs_proxied', apiByName, () => {});
    await startCheckRun(gh, target);
    expect(api.checkRuns).toHaveLength(1);
    expect(proxy.seen.length).toBeGreaterThan(0);
  });

  it('goes direct to a host NO_PROXY names, and only to that host', async () => {
    process.env.HTTP_PROXY = proxy.url;
    process.env.NO_PROXY = 'example.org, .github.test';
    const bypassing = await createGitHub('ghs_direct', apiByName, () => {});
    // Direct, the name does not resolve (NXDOMAIN, or no DNS at all): proof the call did not take the proxy.
    await expect(
      bypassing.rest.checks.create({ ...target, head_sha: target.headSha, request: { retries: 0 } }),
    ).rejects.toThrow(/(ENOTFOUND|EAI_AGAIN) api\.github\.test/);
    expect(proxy.seen).toEqual([]);
    expect(api.requests).toEqual([]);

    // A NO_PROXY that names other hosts leaves this one on the proxy.
    process.env.NO_PROXY = 'example.org,github.test.example,localhost';
    const proxied = await createGitHub('ghs_direct', apiByName, () => {});
    await startCheckRun(proxied, target);
    expect(api.checkRuns).toHaveLength(1);
    expect(proxy.seen.length).toBeGreaterThan(0);
  });

  it('with no proxy variable, calls the API directly', async () => {
    const gh = await createGitHub('ghs_direct', api.url, () => {});
    await startCheckRun(gh, target);
    expect(api.checkRuns).toHaveLength(1);
    await expect(
      (await createGitHub('ghs_direct', apiByName, () => {})).rest.checks.create({
        ...target,
        head_sha: target.headSha,
        request: { retries: 0 },
      }),
    ).rejects.toThrow(/(ENOTFOUND|EAI_AGAIN) api\.github\.test/);
    expect(proxy.seen).toEqual([]);
  });

  it('the bundled action, without node_modules, posts its check run through the runner proxy', async () => {
    const root = mkdtempSync(join(tmpdir(), 'stategate-proxy-'));
    try {
      const ws = join(root, 'workspace');
      mkdirSync(ws);
      // A suite the action refuses: it still creates the check run, then completes it as a failure.
      writeFileSync(join(ws, 'stategate.yml'), 'version: 99\n');
      const step = await runStep({
        dist: actionCopy(join(root, 'action')),
        workspace: ws,
        with: {},
        env: { HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url },
        event: { name: 'push', payload: {} },
        repository: 'acme/refunds',
        sha: target.headSha,
        apiUrl: apiByName,
        token: 'ghs_bundle',
        runnerTemp: join(root, 'runner-temp'),
      });
      expect(step.code, step.stdout + step.stderr).toBe(1);
      expect(step.stderr).not.toMatch(/Cannot find (module|package)/);
      expect(api.checkRuns).toHaveLength(1);
      expect(api.checkRuns[0]).toMatchObject({
        status: 'completed',
        conclusion: 'failure',
        head_sha: target.headSha,
      });
      expect(api.requests.every((r) => r.token === 'ghs_bundle')).toBe(true);
      expect(proxy.seen.length).toBeGreaterThan(0);
      expect(proxy.seen.every((s) => s.known)).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
