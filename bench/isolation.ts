// What the agent namespaces cost per episode: the same command agent run through runCommandAgent
// with process groups only and inside the namespace wrapper, interleaved, medians compared.
// Run: node --import tsx bench/isolation.ts [--episodes 40]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommandAgent } from '../src/agent/command.js';
import { buildAgentEnv } from '../src/agent/env.js';
import {
  harnessNamespaceOptions,
  isolationLine,
  namespaceWrapper,
  probeIsolation,
} from '../src/agent/namespace.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const EPISODES = Number(arg('episodes', '40'));

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
  if (status.mode !== 'namespaces') return;
  const dir = mkdtempSync(join(tmpdir(), 'sg-bench-isolation-'));
  writeFileSync(
    join(dir, 'agent.mjs'),
    `import { readFileSync } from 'node:fs';\nreadFileSync(0, 'utf8');\nconsole.log(JSON.stringify({ reply: 'ok' }));\n`,
  );
  const wrapper = namespaceWrapper(
    harnessNamespaceOptions(dir, [join(dir, '.stategate')], status.unshare, status.setpriv),
  );
  const env = buildAgentEnv({ harnessEnv: process.env, env: {}, passEnv: [] });
  try {
    console.log('| agent | process groups (median ms) | namespaces (median ms) | added | ratio |');
    console.log('|---|---|---|---|---|');
    for (const [name, command] of Object.entries(AGENTS)) {
      const times: Record<'groups' | 'namespaces', number[]> = { groups: [], namespaces: [] };
      for (let i = 0; i < EPISODES; i++) {
        // Alternating, so load changes hit both alike.
        for (const mode of i % 2 === 0
          ? (['groups', 'namespaces'] as const)
          : (['namespaces', 'groups'] as const)) {
          const started = performance.now();
          const run = await runCommandAgent({
            command,
            cwd: dir,
            env,
            input: { message: 'hi', context: {} },
            timeoutMs: 60_000,
            wrapper: mode === 'namespaces' ? wrapper : undefined,
          });
          if (run.result?.reply !== 'ok') throw new Error(`${mode}: ${run.resultError} ${run.stderr}`);
          times[mode].push(performance.now() - started);
        }
      }
      const g = median(times.groups);
      const n = median(times.namespaces);
      console.log(
        `| ${name} | ${g.toFixed(1)} | ${n.toFixed(1)} | ${(n - g).toFixed(1)} | ${(n / g).toFixed(2)}x |`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
