// Bench: agents that wait. Real agents spend an episode waiting on a model, so a run should take as
// long as its slowest episode when concurrency allows. The agent is a long-lived server (agent.url)
// that thinks (sleeps) before each of its three tool calls; each row runs max(64, concurrency)
// scenarios, head only, and its wall time is compared with one scenario alone, measured in the same
// run. Reset is what each episode waited for its database (timings.reset).
// Run: node --import tsx bench/waiting.ts [--think-ms 1000] [--concurrency 1,8,32,64,128]
//        [--engines embedded,postgres] [--scenarios 64]
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProgressEvent } from '../src/run/api.js';
import { runCompare } from '../src/run/compare.js';
import { ADMIN_URL, fixtureSql, SCHEMA, summary, TWIN } from './suite.js';

/** The waiting agent: per episode, think, call, three times (read, write, read back). */
const WAITING_AGENT = `import { createServer } from 'node:http';
const THINK = Number(process.env.THINK_MS);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
createServer(async (req, res) => {
  if (req.method !== 'POST') { res.writeHead(200); res.end('{}'); return; }
  let text = '';
  for await (const chunk of req) text += chunk;
  const { tools_url } = JSON.parse(text);
  const call = async (tool, args) => {
    await sleep(THINK);
    const r = await fetch(tools_url + '/tools/' + tool, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args),
    });
    return r.json();
  };
  await call('get_item', { id: 1 });
  await call('bump', { id: 1 });
  const after = await call('get_item', { id: 1 });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ reply: 'qty ' + after.result.qty, outcome: 'SUCCESS' }));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

export interface WaitingRow {
  engine: 'embedded' | 'postgres';
  concurrency: number;
  scenarios: number;
  /** The episodes phase, seconds. */
  seconds: number;
  /** The whole run (engine, template, pool, agent server, episodes, report), seconds. */
  totalSeconds: number;
  reset: { median: number; p99: number };
  failed: number;
}

function waitingSuite(scenarios: number, concurrency: number, thinkMs: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-bench-wait-'));
  mkdirSync(join(dir, 'db'));
  mkdirSync(join(dir, 'scenarios'));
  writeFileSync(join(dir, 'db', 'schema.sql'), SCHEMA);
  writeFileSync(join(dir, 'db', 'fixtures.sql'), fixtureSql(1000));
  writeFileSync(join(dir, 'twin.yaml'), TWIN);
  writeFileSync(join(dir, 'agent-server.mjs'), WAITING_AGENT);
  for (let i = 0; i < scenarios; i++) {
    const id = `wait-${String(i).padStart(4, '0')}`;
    writeFileSync(
      join(dir, 'scenarios', `${id}.yaml`),
      `id: ${id}
input:
  message: "Bump item 1 (${i})"
expect:
  - id: bumped-once
    query: SELECT qty FROM items WHERE id = 1
    equals: 1
`,
    );
  }
  writeFileSync(
    join(dir, 'stategate.yml'),
    `version: 1
agent:
  url: "http://127.0.0.1:{port}/"
  serve: node agent-server.mjs
  env: { THINK_MS: "${thinkMs}" }
  timeout: 120s
database:
  schema: [db/schema.sql]
  fixtures: [db/fixtures.sql]
twins: [twin.yaml]
scenarios: [scenarios/*.yaml]
repeats: 1
concurrency: ${concurrency}
`,
  );
  return dir;
}

/** Runs `scenarios` waiting episodes at `concurrency` on one engine. */
export async function waitingRun(
  engine: 'embedded' | 'postgres',
  scenarios: number,
  concurrency: number,
  thinkMs: number,
): Promise<WaitingRow> {
  const dir = waitingSuite(scenarios, concurrency, thinkMs);
  let start = 0;
  let end = 0;
  const onProgress = (e: ProgressEvent) => {
    if (e.type === 'phase' && e.phase === 'episodes') start = performance.now();
    if (e.type === 'episode') end = performance.now();
  };
  const t0 = performance.now();
  try {
    const { report } = await runCompare({
      base: null,
      head: dir,
      repo: dir,
      out: join(dir, 'out'),
      engine,
      databaseUrl: engine === 'postgres' ? ADMIN_URL : undefined,
      onProgress,
    });
    const totalSeconds = (performance.now() - t0) / 1000;
    const records = readFileSync(join(dir, 'out', 'episodes.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { record: { timings: Record<string, number> } }).record.timings);
    if (process.env.BENCH_STAGES) {
      for (const k of Object.keys(records[0] ?? {})) {
        const v = summary(records.map((r) => r[k] ?? 0));
        console.log(`  ${k}: p50 ${v.median.toFixed(1)} p99 ${v.p99.toFixed(1)} max ${v.max.toFixed(1)}`);
      }
      console.log(`  setup ${((start - t0) / 1000).toFixed(2)} s`);
      console.log(records.map((r) => (r.reset ?? 0).toFixed(0)).join(' '));
    }
    const s = summary(records.map((r) => r.reset ?? 0));
    return {
      engine,
      concurrency,
      scenarios,
      seconds: (end - start) / 1000,
      totalSeconds,
      reset: { median: s.median, p99: s.p99 },
      failed: report.cases.filter((c) => c.class === 'incomplete').length,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One engine's rows: one scenario alone first, then each concurrency. */
export async function waitingTable(
  engine: 'embedded' | 'postgres',
  concurrencies: number[],
  scenarios: number,
  thinkMs: number,
): Promise<{ alone: WaitingRow; rows: WaitingRow[] }> {
  const alone = await waitingRun(engine, 1, 1, thinkMs);
  const rows: WaitingRow[] = [];
  for (const c of concurrencies) rows.push(await waitingRun(engine, Math.max(scenarios, c), c, thinkMs));
  return { alone, rows };
}

const isMain = process.argv[1]?.endsWith('waiting.ts');
if (isMain) {
  const arg = (name: string, fallback: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  const think = Number(arg('think-ms', '1000'));
  const scenarios = Number(arg('scenarios', '64'));
  const concurrencies = arg('concurrency', '1,8,32,64,128').split(',').map(Number);
  const engines = arg('engines', 'embedded,postgres').split(',') as ('embedded' | 'postgres')[];
  for (const engine of engines) {
    const { alone, rows } = await waitingTable(engine, concurrencies, scenarios, think);
    console.log(
      `${engine}: one scenario alone ${alone.seconds.toFixed(2)} s (run ${alone.totalSeconds.toFixed(2)} s)`,
    );
    for (const r of rows) {
      const waves = Math.ceil(r.scenarios / r.concurrency);
      console.log(
        `${engine} c=${r.concurrency} scenarios=${r.scenarios}: ${r.seconds.toFixed(2)} s = ${(r.seconds / alone.seconds).toFixed(2)}x alone (ideal ${waves}x), run ${r.totalSeconds.toFixed(2)} s; reset p50 ${r.reset.median.toFixed(1)} ms p99 ${r.reset.p99.toFixed(1)} ms; incomplete ${r.failed}`,
      );
    }
  }
}
