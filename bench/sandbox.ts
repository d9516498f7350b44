// What the bubblewrap sandbox costs per episode against today's unshare namespaces and process
// groups alone: the same command agent through runCommandAgent in each, interleaved so that load
// changes hit all alike, medians compared. The sandbox's time includes its runner (a Node start
// inside, which carries the forwarded tools socket); the unshare init is a shell.
// Run: node --import tsx bench/sandbox.ts [--episodes 30]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommandAgent } from '../src/agent/command.js';
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
const EPISODES = Number(arg('episodes', '30'));

const AGENTS: Record<string, string> = {
  // The wrapper's own cost: the agent does nothing but print its result.
  'shell (echo)': `echo '{"reply":"ok"}'`,
  // A typical agent process: Node starting, reading stdin, printing its result.
  'node agent': 'node agent.mjs',
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
  const dir = mkdtempSync(join(tmpdir(), 'sg-bench-sandbox-'));
  writeFileSync(
    join(dir, 'agent.mjs'),
    `import { readFileSync } from 'node:fs';\nreadFileSync(0, 'utf8');\nconsole.log(JSON.stringify({ reply: 'ok' }));\n`,
  );
  const hide = [join(dir, '.stategate')];
  const wrappers: Record<string, CommandWrapper | undefined> = {
    groups: undefined,
    unshare: namespaceWrapper(harnessNamespaceOptions(dir, hide, status.unshare, status.setpriv)),
    bwrap: new SideSandbox({ checkout: dir, hide: () => hide, status: status.sandbox }),
  };
  const modes = Object.keys(wrappers);
  // A tools URL, so the sandbox sets up its forward as an episode does (nothing listens: unused).
  const env = {
    ...buildAgentEnv({ harnessEnv: process.env, env: {}, passEnv: [] }),
    STATEGATE_TOOLS_URL: 'http://127.0.0.1:9999/e/bench',
  };
  try {
    console.log(
      '| agent | process groups (ms) | unshare namespaces (ms) | bwrap sandbox (ms) | bwrap − unshare |',
    );
    console.log('|---|---|---|---|---|');
    for (const [name, command] of Object.entries(AGENTS)) {
      const times: Record<string, number[]> = Object.fromEntries(modes.map((m) => [m, []]));
      for (let i = 0; i < EPISODES; i++) {
        const order = modes.map((_, j) => modes[(i + j) % modes.length]);
        for (const mode of order) {
          const started = performance.now();
          const run = await runCommandAgent({
            command,
            cwd: dir,
            env,
            input: { message: 'hi', context: {} },
            timeoutMs: 60_000,
            wrapper: wrappers[mode],
          });
          if (run.result?.reply !== 'ok') throw new Error(`${mode}: ${run.resultError} ${run.stderr}`);
          times[mode].push(performance.now() - started);
        }
      }
      const [g, u, b] = modes.map((m) => median(times[m]));
      console.log(
        `| ${name} | ${g.toFixed(1)} | ${u.toFixed(1)} | ${b.toFixed(1)} | ${(b - u).toFixed(1)} |`,
      );
    }
  } finally {
    await (wrappers.bwrap as SideSandbox).close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
