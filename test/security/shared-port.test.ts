// Attack: base and head are two checkouts of one repository, so they share stategate.yml and the
// agent server's port. The head's server cannot bind and its episodes reach the base's server (or
// the other way round): the gate compares one version with itself. Each side's server gets its own
// free port through `{port}`; a literal port both sides ask for, or a URL that already answers
// before serve starts, is refused before any episode.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { GradedEpisode } from '../../src/model/episode.js';
import { runCompare } from '../../src/run/pipeline.js';
import { agentSharedDir } from '../helpers/agent-dir.js';
import { commitTagged, initRepo } from '../helpers/demo-repo.js';
import { putTwin, writeSuite } from './suite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const TWIN = putTwin();

/** An agent server that stores its own version under the episode id and replies with it. */
const SERVER = `import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
const VERSION = readFileSync(new URL('./VERSION', import.meta.url), 'utf8').trim();
createServer(async (req, res) => {
  let text = '';
  for await (const chunk of req) text += chunk;
  if (req.method !== 'POST') return res.end('{}');
  const body = JSON.parse(text);
  const put = await fetch(body.tools_url + '/tools/put', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ k: body.episode, v: VERSION }),
  });
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ reply: VERSION + ' ' + put.status, outcome: 'SUCCESS' }));
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log(VERSION + ' listening on ' + process.env.PORT));
`;

const EXPECT = `  - id: stored
    query: SELECT count(*) FROM kv WHERE k <> 'seed'
    equals: 1
`;

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** A repository with one commit per version of the server, tagged; agent.url as given. */
function repoWith(url: string, env = '', server = SERVER, repeats = 2): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-shared-port-'));
  dirs.push(dir);
  const inDir = (...args: string[]) => git(dir, ...args);
  initRepo(inDir);
  writeSuite(
    {
      twin: TWIN,
      agentFiles: { 'server.mjs': server },
      agent: `  url: ${url}\n  serve: node server.mjs\n  timeout: 60s${env}`,
      expect: EXPECT,
      repeats,
    },
    dir,
  );
  for (const version of ['v1', 'v2']) {
    writeFileSync(join(dir, 'VERSION'), `${version}\n`);
    commitTagged(inDir, version);
  }
  return dir;
}

function episodes(out: string): GradedEpisode[] {
  return readFileSync(join(out, 'episodes.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as GradedEpisode);
}

describe('two checkouts of one repository with agent.url + agent.serve', () => {
  it('run side by side on {port}: every call of a side comes from its own server', {
    timeout: 300_000,
  }, async () => {
    const repo = repoWith('http://127.0.0.1:{port}/');
    const out = join(repo, 'out');
    const { report } = await runCompare({ base: 'v1', head: 'v2', repo, out, engine: 'embedded' });
    const all = episodes(out);
    expect(all).toHaveLength(4);
    for (const g of all) {
      const version = g.record.side === 'base' ? 'v1' : 'v2';
      expect(g.record.infraError).toBeUndefined();
      expect(g.record.agent.result?.reply).toBe(`${version} 200`);
      expect(g.record.calls.map((c) => c.args)).toEqual([{ k: g.record.episode, v: version }]);
    }
    expect(report.cases[0].class).toBe('unchanged');
    // Each side's server log is its own: its version, on a port of its own.
    const listening = ['base', 'head'].map((side) =>
      readFileSync(join(out, `agent-server-${side}.log`), 'utf8').match(/(v\d) listening on (\d+)/),
    );
    expect(listening.map((m) => m?.[1])).toEqual(['v1', 'v2']);
    expect(listening[0]?.[2]).not.toBe(listening[1]?.[2]);
  });

  it("restarts a side's server that dies for that side only, on its own port", {
    timeout: 300_000,
  }, async () => {
    // v2's first incarnation exits after its first answer; the restart finds the mark and stays up.
    // The mark goes where the server may write whatever user it runs as (as root: not its checkout).
    const diedOnce = join(agentSharedDir('sg-shared-port-'), 'died-once');
    const dying = SERVER.replace(
      "res.end(JSON.stringify({ reply: VERSION + ' ' + put.status, outcome: 'SUCCESS' }));",
      `res.end(JSON.stringify({ reply: VERSION + ' ' + put.status, outcome: 'SUCCESS' }));
  const { existsSync, writeFileSync } = await import('node:fs');
  if (VERSION === 'v2' && !existsSync(${JSON.stringify(diedOnce)})) { writeFileSync(${JSON.stringify(diedOnce)}, ''); setTimeout(() => process.exit(3), 50); }`,
    );
    const repo = repoWith('http://127.0.0.1:{port}/', '', dying, 4);
    const out = join(repo, 'out');
    await runCompare({ base: 'v1', head: 'v2', repo, out, engine: 'embedded', concurrency: 1 });
    const logs = Object.fromEntries(
      ['base', 'head'].map((side) => [side, readFileSync(join(out, `agent-server-${side}.log`), 'utf8')]),
    );
    const listening = (log: string) =>
      [...log.matchAll(/(v\d) listening on (\d+)/g)].map((m) => `${m[1]}:${m[2]}`);
    expect(logs.head).toContain('restarting the agent server (once)');
    expect(logs.base).not.toContain('restarting');
    const head = listening(logs.head);
    expect(head).toHaveLength(2);
    expect(head[0]).toBe(head[1]);
    expect(listening(logs.base)).toHaveLength(1);
    // Whatever answered each side was that side's own server.
    const all = episodes(out);
    expect(all).toHaveLength(8);
    for (const g of all) {
      const version = g.record.side === 'base' ? 'v1' : 'v2';
      for (const call of g.record.calls) expect(call.args).toEqual({ k: g.record.episode, v: version });
      if (g.record.agent.result) expect(g.record.agent.result.reply).toBe(`${version} 200`);
    }
    expect(
      all.filter((g) => g.record.side === 'head' && g.record.agent.result).length,
    ).toBeGreaterThanOrEqual(3);
  });

  it('refuses one literal port for both sides before any episode', { timeout: 300_000 }, async () => {
    const repo = repoWith('http://127.0.0.1:8123/', '\n  env: { PORT: 8123 }');
    const out = join(repo, 'out');
    await expect(runCompare({ base: 'v1', head: 'v2', repo, out, engine: 'embedded' })).rejects.toThrow(
      'base and head both use port 8123 in agent.url: use {port}',
    );
    expect(existsSync(join(out, 'episodes.jsonl'))).toBe(false);
    expect(existsSync(join(out, 'agent-server-base.log'))).toBe(false);
  });

  it('refuses {port} without agent.serve: nothing of this side would listen there', {
    timeout: 300_000,
  }, async () => {
    const dir = writeSuite({
      twin: TWIN,
      agentFiles: {},
      agent: '  url: http://127.0.0.1:{port}/\n  timeout: 60s',
      expect: EXPECT,
    });
    dirs.push(dir);
    const out = join(dir, 'out');
    await expect(runCompare({ base: null, head: dir, repo: dir, out, engine: 'embedded' })).rejects.toThrow(
      'head: agent.url http://127.0.0.1:{port}/ has {port}, which only a server Stategate starts can listen on',
    );
    expect(existsSync(join(out, 'episodes.jsonl'))).toBe(false);
  });

  it('refuses a URL that already answers before its serve started', { timeout: 300_000 }, async () => {
    // An impostor already listens where the head's server would: its answers must never count.
    const impostor: Server = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ reply: 'impostor', outcome: 'SUCCESS' }));
    });
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    const port = (impostor.address() as AddressInfo).port;
    try {
      const repo = repoWith(`http://127.0.0.1:${port}/`, `\n  env: { PORT: ${port} }`);
      const out = join(repo, 'out');
      await expect(runCompare({ base: null, head: 'v2', repo, out, engine: 'embedded' })).rejects.toThrow(
        `something already listens on http://127.0.0.1:${port}`,
      );
      expect(existsSync(join(out, 'episodes.jsonl'))).toBe(false);
    } finally {
      await new Promise((resolve) => impostor.close(resolve));
    }
  });
});
