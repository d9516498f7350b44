// An agent server (agent.serve) in its side's bubblewrap sandbox dies during one episode: it is
// restarted once, and the next episode, which starts at once (its database is prepared while its
// agent starts), is answered by the new server, whose tool calls reach the gateway through the
// URLs forwarded into the new sandbox. (The container twin of this test is in
// test/security/container-agent.test.ts, where the restart takes seconds.)
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareOnTestServer } from '../security/suite.js';
import { kvSuite, readEpisodes } from './kv-suite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SERVER = `import { createServer } from 'node:http';
createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    if (req.method !== 'POST') { res.end('{}'); return; }
    const { scenario, tools_url } = JSON.parse(body);
    if (scenario === 'a-crash') process.exit(3);
    // A tool call proves the episode's forwarded URL reaches this server's sandbox.
    fetch(tools_url + '/tools/list', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}',
    }).then((r) => r.json()).then((got) => {
      res.end(JSON.stringify({ reply: 'fine ' + JSON.stringify(got.result ?? got), outcome: 'SUCCESS' }));
    }, (e) => { res.statusCode = 500; res.end(String(e)); });
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

describe('an agent server in its sandbox that dies', () => {
  it('is restarted once and the next episode, started at once, is answered by the new server', {
    timeout: 180_000,
  }, async () => {
    const dir = kvSuite({
      scenarios: ['a-crash', 'b-fine'],
      concurrency: 1,
      agent: '',
      expect: '  - id: untouched\n    query: SELECT count(*) FROM kv\n    equals: 1\n',
    });
    dirs.push(dir);
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'server.mjs'), SERVER);
    const config = readFileSync(join(dir, 'stategate.yml'), 'utf8');
    writeFileSync(
      join(dir, 'stategate.yml'),
      config.replace(
        '  command: node agent.mjs\n',
        '  url: http://127.0.0.1:{port}/\n  serve: node server.mjs\n',
      ),
    );
    const out = join(dir, 'out');
    const { report } = await compareOnTestServer(dir, null, out);
    expect(report.agent_isolation?.ran).toBe('sandbox');
    const byScenario = Object.fromEntries(readEpisodes(out).map((g) => [g.record.scenario, g]));
    expect(byScenario['a-crash'].record.agent.resultError).toMatch(/agent server exited \(code 3\)/);
    const fine = byScenario['b-fine'].record;
    expect(fine.infraError, JSON.stringify(fine)).toBeUndefined();
    expect(fine.agent.result?.reply, JSON.stringify(fine.agent)).toMatch(/^fine /);
    expect(fine.calls.map((c) => c.tool)).toEqual(['list']);
    expect(readFileSync(join(out, 'agent-server-head.log'), 'utf8')).toContain(
      'restarting the agent server (once)',
    );
  });
});
