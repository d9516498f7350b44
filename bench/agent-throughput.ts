// Episodes per second of the demo suite with the command adapter (one process per episode) against the
// agent.url adapter (one long-lived server per side, one POST per episode), measured side by side.
// Run: node --import tsx bench/agent-throughput.ts [--repeats 3] [--rounds 2] [--concurrency 4] [--engine postgres]
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { ProgressEvent } from '../src/run/api.js';
import { runCompare } from '../src/run/pipeline.js';
import { ROOT, writeDemoFiles } from '../test/helpers/demo-repo.js';
import { benchArgs } from './args.js';

const { arg } = benchArgs(import.meta.url, ['repeats', 'rounds', 'concurrency', 'engine']);
const REPEATS = Number(arg('repeats', '3'));
const ROUNDS = Number(arg('rounds', '2'));
const CONCURRENCY = Number(arg('concurrency', '4'));
const ENGINE = arg('engine', 'postgres') as 'postgres' | 'embedded';
const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const VERSION = 'v1.3.1';

type Adapter = 'command' | 'url';

/** A TCP port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A checkout of the demo whose agent section uses the adapter. */
async function checkout(adapter: Adapter): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), `sg-bench-${adapter}-`));
  writeDemoFiles(dir, VERSION);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const config = parse(readFileSync(join(dir, 'stategate.yml'), 'utf8')) as Record<string, unknown>;
  if (adapter === 'url') {
    const port = await freePort();
    config.agent = {
      url: `http://127.0.0.1:${port}/`,
      serve: 'node examples/refund-agent/server.mjs',
      env: { PORT: port },
      timeout: '30s',
    };
  }
  writeFileSync(join(dir, 'stategate.yml'), stringify(config));
  return dir;
}

/** Runs the suite once on one side and times its episodes phase (not checkout, engine or setup). */
async function measure(dir: string): Promise<{ episodes: number; seconds: number; agentMs: number }> {
  let start = 0;
  let end = 0;
  let total = 0;
  const onProgress = (e: ProgressEvent) => {
    if (e.type === 'phase' && e.phase === 'episodes') start = performance.now();
    if (e.type === 'episode') {
      end = performance.now();
      total = e.total;
    }
  };
  const { report } = await runCompare({
    base: null,
    head: dir,
    repo: dir,
    out: join(dir, '.stategate'),
    repeats: REPEATS,
    concurrency: CONCURRENCY,
    engine: ENGINE,
    databaseUrl: ENGINE === 'postgres' ? ADMIN_URL : undefined,
    onProgress,
  });
  const failed = report.cases.filter((c) => c.class === 'incomplete');
  if (failed.length > 0) throw new Error(`incomplete cases: ${failed.map((c) => c.id).join(', ')}`);
  const episodes = readFileSync(join(dir, '.stategate', 'episodes.jsonl'), 'utf8')
    .trim()
    .split('\n');
  const agentMs = episodes.map(
    (line) => (JSON.parse(line) as { record: { agent: { durationMs: number } } }).record.agent.durationMs,
  );
  return {
    episodes: total,
    seconds: (end - start) / 1000,
    agentMs: agentMs.reduce((a, b) => a + b, 0) / agentMs.length,
  };
}

const dirs: Record<Adapter, string> = { command: await checkout('command'), url: await checkout('url') };
const totals: Record<Adapter, { episodes: number; seconds: number; agentMs: number[] }> = {
  command: { episodes: 0, seconds: 0, agentMs: [] },
  url: { episodes: 0, seconds: 0, agentMs: [] },
};
console.log(
  `demo suite (${VERSION}), ${REPEATS} repeats, concurrency ${CONCURRENCY}, ${ENGINE} engine, ${cpus().length} cores, ${ROUNDS} rounds`,
);
try {
  for (let round = 1; round <= ROUNDS; round++) {
    // Alternate which adapter goes first so neither always runs on a warmer machine.
    const order: Adapter[] = round % 2 === 1 ? ['command', 'url'] : ['url', 'command'];
    for (const adapter of order) {
      const m = await measure(dirs[adapter]);
      totals[adapter].episodes += m.episodes;
      totals[adapter].seconds += m.seconds;
      totals[adapter].agentMs.push(m.agentMs);
      console.log(
        `round ${round} ${adapter.padEnd(7)} ${m.episodes} episodes in ${m.seconds.toFixed(2)} s: ${(m.episodes / m.seconds).toFixed(2)} episodes/s, agent ${m.agentMs.toFixed(0)} ms per episode`,
      );
    }
  }
  const rate = (a: Adapter) => totals[a].episodes / totals[a].seconds;
  const agent = (a: Adapter) => totals[a].agentMs.reduce((x, y) => x + y, 0) / totals[a].agentMs.length;
  for (const a of ['command', 'url'] as const) {
    console.log(
      `${a.padEnd(7)} ${rate(a).toFixed(2)} episodes/s, agent ${agent(a).toFixed(0)} ms per episode`,
    );
  }
  console.log(`agent.url / command: ${(rate('url') / rate('command')).toFixed(2)}x episodes per second`);
} finally {
  for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
}
