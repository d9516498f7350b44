// Attack: "each side is what it claims". sharedPortProblem refuses a head whose literal agent.url
// names the base's literal loopback port, but reads hosts by spelling: an IPv4-mapped IPv6 address
// or a fully qualified `localhost.` reaches the same listener under another key. With agent.url and
// no agent.serve the head's side starts nothing and has no "answers before serve" check, so every
// head episode is answered by the base's server and the head's code never runs.
import { describe, expect, it } from 'vitest';
import { sharedPortProblem } from '../../src/agent/port.js';
import type { AgentConfig } from '../../src/config/schema.js';

const agent = (url: string, serve?: string) =>
  ({
    url,
    serve,
    timeout: '60s',
    env: {},
    pass_env: [],
    isolation: 'process',
    network: 'own',
  }) as AgentConfig;
const base = agent('http://127.0.0.1:8080/', 'node server.mjs');

describe('the head names the base literal agent port under another spelling', () => {
  for (const url of [
    'http://127.0.0.1:8080/',
    'http://[::ffff:127.0.0.1]:8080/',
    'http://localhost.:8080/',
    'http://[::1]:8080/',
  ]) {
    it(`refuses a head agent.url of ${url}`, () => {
      expect(sharedPortProblem({ base, head: agent(url) })).not.toBeNull();
    });
  }
});
