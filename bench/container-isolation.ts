// The per-episode cost of `agent.isolation: container` against `process`: the same trivial agent
// (reads stdin, makes one tool call to a loopback server, prints its result) run one episode at a
// time both ways; prints the medians and their ratio, and writes them into docs/performance.md.
// Run: DOCKER_HOST=unix:///run/stategate-docker.sock TESTCONTAINERS_RYUK_DISABLED=true \
//        node --import tsx bench/container-isolation.ts [--episodes 10] [--image stategate-agent:local] [--no-write]
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AgentContainers } from '../src/agent/container.js';
import { runCommandAgent } from '../src/agent/index.js';
import { benchArgs } from './args.js';

const { arg, flag } = benchArgs(import.meta.url, ['episodes', 'image'], ['no-write']);
const EPISODES = Number(arg('episodes', '10'));
const IMAGE = arg('image', 'stategate-agent:local');
const BEGIN = '<!-- container-isolation:begin -->';
const END = '<!-- container-isolation:end -->';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const gateway = createServer((_req, res) => res.end('{"result":[]}'));
await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', () => r()));
const port = (gateway.address() as { port: number }).port;
const dir = mkdtempSync(join(tmpdir(), 'sg-bench-container-'));
chmodSync(dir, 0o755);
writeFileSync(
  join(dir, 'agent.mjs'),
  `let input = ''; for await (const c of process.stdin) input += c;
const r = await fetch(process.env.STATEGATE_TOOLS_URL + '/tools/list', { method: 'POST', body: '{}' });
console.log(JSON.stringify({ reply: String(r.status), outcome: 'SUCCESS' }));\n`,
);
const env = { PATH: process.env.PATH ?? '', STATEGATE_TOOLS_URL: `http://127.0.0.1:${port}/e/x` };
const containers = new AgentContainers({ image: IMAGE, checkoutDir: dir });

async function episodes(runner?: typeof containers.run): Promise<number[]> {
  const times: number[] = [];
  // One warm-up episode each (module loading, the image's first start).
  for (let i = 0; i <= EPISODES; i++) {
    const t = performance.now();
    const run = await runCommandAgent({
      command: 'node agent.mjs',
      cwd: dir,
      env,
      input: { message: 'hi', context: {} },
      timeoutMs: 60_000,
      ...(runner ? { runner: (o) => runner.call(containers, o) } : {}),
    });
    if (run.result?.reply !== '200') throw new Error(`episode failed: ${run.resultError} ${run.stderr}`);
    if (i > 0) times.push(performance.now() - t);
  }
  return times;
}

const processTimes = await episodes();
const containerTimes = await episodes(containers.run);
await containers.close();
gateway.close();
rmSync(dir, { recursive: true, force: true });

const p = median(processTimes);
const c = median(containerTimes);
const lines = [
  BEGIN,
  '## 5. Agents in containers (`agent.isolation: container`)',
  '',
  `Measured with \`bench/container-isolation.ts\` (${EPISODES} episodes each way, one at a time, after one warm-up; ` +
    `${cpus().length} cores shared with other work, Docker ${process.env.DOCKER_HOST ? 'on a private socket' : 'default socket'}). ` +
    'The agent reads stdin, makes one tool call and prints its result. A container episode adds: a container ' +
    'created, started, waited for and removed through Testcontainers, the runner (node) starting inside and ' +
    'bridging the tool URL, and the output sockets.',
  '',
  '| isolation | median episode | min | max |',
  '|---|---:|---:|---:|',
  `| process | ${p.toFixed(0)} ms | ${Math.min(...processTimes).toFixed(0)} ms | ${Math.max(...processTimes).toFixed(0)} ms |`,
  `| container | ${c.toFixed(0)} ms | ${Math.min(...containerTimes).toFixed(0)} ms | ${Math.max(...containerTimes).toFixed(0)} ms |`,
  '',
  `Ratio container / process: **${(c / p).toFixed(1)}x** per episode (about ${(c - p).toFixed(0)} ms more). ` +
    'agent.serve in a container pays the container start once per side, not per episode.',
  END,
];
console.log(lines.join('\n'));
if (!flag('no-write')) {
  const file = resolve(import.meta.dirname, '..', 'docs', 'performance.md');
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  const section = lines.join('\n');
  const next =
    start >= 0 && end > start
      ? `${text.slice(0, start)}${section}${text.slice(end + END.length)}`
      : `${text.trimEnd()}\n\n${section}\n`;
  writeFileSync(file, next);
  console.log('\nwrote docs/performance.md');
}
