// What agent isolation costs per episode: the same command agent through runCommandAgent with
// process groups only, in the unshare namespaces (the fallback), in the bubblewrap sandbox (the
// default) and, with --image, in a container (agent.isolation: container). The agents: a shell that
// only prints its result (the wrapper's own cost) and a Node agent that reads stdin and makes one
// tool call to a loopback server (through the forwarded socket where the network is the agent's
// own). Modes are interleaved so that load changes hit all alike; one warm-up round; medians.
// The sandbox's time includes its runner (a Node start inside, which carries the forwards).
// Run: node --import tsx bench/isolation.ts [--episodes 20] [--image stategate-agent:local]
//      (with --image: DOCKER_HOST=unix:///run/stategate-docker.sock TESTCONTAINERS_RYUK_DISABLED=true)
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommandAgent } from '../src/agent/command.js';
import { AgentContainers } from '../src/agent/container.js';
import { buildAgentEnv } from '../src/agent/env.js';
import {
  type CommandWrapper,
  harnessNamespaceOptions,
  isolationLine,
  namespaceWrapper,
  probeIsolation,
} from '../src/agent/namespace.js';
import { SideSandbox } from '../src/agent/sandbox.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const EPISODES = Number(arg('episodes', '20'));
const IMAGE = arg('image', '');

const AGENTS: Record<string, { command: string; reply: string }> = {
  'shell (echo)': { command: `echo '{"reply":"ok"}'`, reply: 'ok' },
  'node, one tool call': { command: 'node agent.mjs', reply: '200' },
};

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main(): Promise<void> {
  const status = await probeIsolation();
  console.log(isolationLine(status));
  if (status.mode !== 'namespaces' || !status.sandbox || !status.unshare) {
    console.log('needs both bubblewrap and unshare here');
    return;
  }
  const gateway = createServer((_req, res) => res.end('{"result":[]}'));
  await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', () => r()));
  const port = (gateway.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), 'sg-bench-isolation-'));
  chmodSync(dir, 0o755);
  writeFileSync(
    join(dir, 'agent.mjs'),
    `let input = ''; for await (const c of process.stdin) input += c;
const r = await fetch(process.env.STATEGATE_TOOLS_URL + '/tools/list', { method: 'POST', body: '{}' });
console.log(JSON.stringify({ reply: String(r.status) }));\n`,
  );
  chmodSync(join(dir, 'agent.mjs'), 0o644);
  const hide = [join(dir, '.stategate')];
  const sandbox = new SideSandbox({ checkout: dir, hide: () => hide, status: status.sandbox });
  const containers = IMAGE ? new AgentContainers({ image: IMAGE, checkoutDir: dir }) : undefined;
  type Mode = { wrapper?: CommandWrapper; container?: AgentContainers };
  const modes: Record<string, Mode> = {
    'process groups': {},
    'unshare namespaces': {
      wrapper: namespaceWrapper(harnessNamespaceOptions(dir, hide, status.unshare, status.setpriv)),
    },
    'bwrap sandbox': { wrapper: sandbox },
    ...(containers ? { container: { container: containers } } : {}),
  };
  const names = Object.keys(modes);
  const env = {
    ...buildAgentEnv({ harnessEnv: process.env, env: {}, passEnv: [] }),
    STATEGATE_TOOLS_URL: `http://127.0.0.1:${port}/e/bench`,
  };
  try {
    console.log(`${cpus().length} cores, ${EPISODES} episodes per agent and mode, medians in ms`);
    console.log(`| agent | ${names.join(' | ')} | sandbox − unshare |`);
    console.log(`|---|${names.map(() => '---|').join('')}---|`);
    for (const [name, agent] of Object.entries(AGENTS)) {
      const times: Record<string, number[]> = Object.fromEntries(names.map((m) => [m, []]));
      for (let i = 0; i <= EPISODES; i++) {
        for (const mode of names.map((_, j) => names[(i + j) % names.length])) {
          const { wrapper, container } = modes[mode];
          const started = performance.now();
          const run = await runCommandAgent({
            command: agent.command,
            cwd: dir,
            env,
            input: { message: 'hi', context: {} },
            timeoutMs: 60_000,
            ...(wrapper ? { wrapper } : {}),
            ...(container ? { runner: (o) => container.run(o) } : {}),
          });
          if (run.result?.reply !== agent.reply) throw new Error(`${mode}: ${run.resultError} ${run.stderr}`);
          // Round 0 warms up (module loading, the image's first start).
          if (i > 0) times[mode].push(performance.now() - started);
        }
      }
      const medians = names.map((m) => median(times[m]));
      const gap = median(times['bwrap sandbox']) - median(times['unshare namespaces']);
      console.log(`| ${name} | ${medians.map((m) => m.toFixed(1)).join(' | ')} | ${gap.toFixed(1)} |`);
    }
  } finally {
    await sandbox.close();
    await containers?.close();
    gateway.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
