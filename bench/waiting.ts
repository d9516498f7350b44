// Bench: agents that wait. Real agents spend an episode waiting on a model, so a run should take as
// long as its slowest episode when concurrency allows. The agent is a long-lived server (agent.url)
// that thinks (sleeps) before each of its three tool calls; each row runs max(64, concurrency)
// scenarios, head only, and its whole run (the headline) and episodes phase are compared with one
// scenario alone, measured in the same run. Reset is what each episode waited for its database
// before its agent could be served (timings.reset); db wait what its agent's first tool call waited
// for a database still being prepared (timings.db_wait).
// Run: node --import tsx bench/waiting.ts [--think-ms 1000] [--concurrency 1,8,32,64,128] [--runs 3]
//        [--engines embedded,postgres] [--postgres-concurrency ...] [--scenarios 64] [--cli]
//        [--data FILE] [--from FILE] [--write]
// --cli also runs each row as a user starts it (node bin/stategate.mjs run: npm run build first)
// and times that whole command.
// --data keeps what was measured in FILE; --from writes the section from such a file without
// running; --write replaces its section of docs/performance.md (between its markers).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import type { ProgressEvent } from '../src/run/api.js';
import { runCompare } from '../src/run/pipeline.js';
import { benchArgs } from './args.js';
import { ADMIN_URL, benchSuite, episodeTimings, summary } from './suite.js';

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
  /**
   * With --cli: the same run as a user starts it (`node bin/stategate.mjs run`, the built dist/),
   * timed from spawn to exit, in a run of its own: Node's start, loading, the run, the exit.
   */
  commandSeconds?: number;
  /**
   * With --cli on the postgres engine: seconds from the command's exit until the child it left had
   * dropped the run's databases (not in the whole command; the next row starts after it).
   */
  droppedAfterSeconds?: number;
  reset: { median: number; p99: number };
  /** What each agent's first tool call waited for its database (timings.db_wait), ms. */
  dbWait: { median: number; p99: number };
  /** Reset and session (the gateway opened), per episode: everything before the agent starts. */
  start: { p99: number };
  /** 1-minute load average of the machine when the row started and when it ended. */
  load: [number, number];
  failed: number;
}

/** The suite of one row: `scenarios` waiting scenarios at `concurrency`. */
function waitingSuite(scenarios: number, concurrency: number, thinkMs: number): string {
  return benchSuite(1000, scenarios, 1, concurrency, {
    file: 'agent-server.mjs',
    source: WAITING_AGENT,
    config: [
      '  url: "http://127.0.0.1:{port}/"',
      '  serve: node agent-server.mjs',
      `  env: { THINK_MS: "${thinkMs}" }`,
      '  timeout: 120s',
    ],
  }).dir;
}

/**
 * Waits until no database whose owner comment names process `pid` is left on the bench's server
 * (a command hands its drops to a child that outlives it); seconds waited. Throws after 120 s.
 */
async function awaitDropped(pid: number): Promise<number> {
  const t0 = performance.now();
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    for (;;) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (SELECT shobj_description(oid, 'pg_database') AS note FROM pg_database
          WHERE datname LIKE 'sg\\_%') d WHERE CASE WHEN note LIKE '{%' THEN note::jsonb->>'pid' END = $1`,
        [String(pid)],
      );
      if (rows[0].n === 0) return (performance.now() - t0) / 1000;
      if (performance.now() - t0 > 120_000)
        throw new Error(`the databases of process ${pid} were not dropped in 120 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await client.end();
  }
}

/**
 * The whole command, as a user runs it: `node bin/stategate.mjs run --dir DIR --engine E` (the
 * built dist/, so `npm run build` first), seconds from spawn to exit. Throws unless it exits 0.
 * On the postgres engine it then waits for the databases the command left to a child to drop
 * (`droppedAfter`), so the next run does not share the cores with those drops.
 */
export async function commandRun(
  engine: 'embedded' | 'postgres',
  scenarios: number,
  concurrency: number,
  thinkMs: number,
): Promise<{ seconds: number; droppedAfter?: number }> {
  const dir = waitingSuite(scenarios, concurrency, thinkMs);
  const bin = resolve(import.meta.dirname, '..', 'bin', 'stategate.mjs');
  const args = [bin, 'run', '--dir', dir, '--engine', engine];
  if (engine === 'postgres') args.push('--database-url', ADMIN_URL);
  try {
    const t0 = performance.now();
    let pid = 0;
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((done, fail) => {
      const child = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
      pid = child.pid ?? 0;
      let stderr = '';
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      child.once('error', fail);
      child.once('close', (code) => done({ code, stderr }));
    });
    const seconds = (performance.now() - t0) / 1000;
    if (code !== 0) throw new Error(`stategate run exited ${code}:\n${stderr.slice(-2000)}`);
    return { seconds, droppedAfter: engine === 'postgres' ? await awaitDropped(pid) : undefined };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `scenarios` waiting episodes at `concurrency` on one engine. */
export async function waitingRun(
  engine: 'embedded' | 'postgres',
  scenarios: number,
  concurrency: number,
  thinkMs: number,
): Promise<WaitingRow> {
  const dir = waitingSuite(scenarios, concurrency, thinkMs);
  const loadBefore = loadavg()[0];
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
    const records = await episodeTimings(join(dir, 'out', 'episodes.jsonl'));
    if (process.env.BENCH_STAGES) {
      for (const k of Object.keys(records[0] ?? {})) {
        const v = summary(records.map((r) => r[k] ?? 0));
        console.log(`  ${k}: p50 ${v.median.toFixed(1)} p99 ${v.p99.toFixed(1)} max ${v.max.toFixed(1)}`);
      }
      console.log(`  setup ${((start - t0) / 1000).toFixed(2)} s`);
      console.log(records.map((r) => (r.reset ?? 0).toFixed(0)).join(' '));
    }
    const s = summary(records.map((r) => r.reset ?? 0));
    const waited = summary(records.map((r) => r.db_wait ?? 0));
    const started = summary(records.map((r) => (r.reset ?? 0) + (r.session ?? 0)));
    return {
      engine,
      concurrency,
      scenarios,
      seconds: (end - start) / 1000,
      totalSeconds,
      reset: { median: s.median, p99: s.p99 },
      dbWait: { median: waited.median, p99: waited.p99 },
      start: { p99: started.p99 },
      load: [loadBefore, loadavg()[0]],
      failed: report.cases.filter((c) => c.class === 'incomplete').length,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One engine's rows: one scenario alone first, then each concurrency. With `runs` above 1 each row
 * but concurrency 1 (64 episodes in a row: an average already) is run that many times and the run
 * with the median whole command (with `cli`; else whole run) is kept: a single 4-second run alone
 * varies by 10% between runs, and every ratio divides by it.
 */
export async function waitingTable(
  engine: 'embedded' | 'postgres',
  concurrencies: number[],
  scenarios: number,
  thinkMs: number,
  runs = 1,
  cli = false,
): Promise<{ alone: WaitingRow; rows: WaitingRow[] }> {
  const median = async (n: number, c: number) => {
    const all: WaitingRow[] = [];
    for (let i = 0; i < (c === 1 && n > 1 ? 1 : runs); i++) {
      const row = await waitingRun(engine, n, c, thinkMs);
      // 64 episodes in a row (concurrency 1) take minutes: that row is timed in-process only.
      if (cli && !(c === 1 && n > 1)) {
        const command = await commandRun(engine, n, c, thinkMs);
        row.commandSeconds = command.seconds;
        row.droppedAfterSeconds = command.droppedAfter;
      }
      all.push(row);
    }
    // The headline decides which run is the median: the whole command where it is timed.
    all.sort((a, b) => (a.commandSeconds ?? a.totalSeconds) - (b.commandSeconds ?? b.totalSeconds));
    return all[Math.floor(all.length / 2)];
  };
  const alone = await median(1, 1);
  const rows: WaitingRow[] = [];
  for (const c of concurrencies) rows.push(await median(Math.max(scenarios, c), c));
  return { alone, rows };
}

/** The docs/performance.md section of these tables (between its markers). */
export function waitingSection(
  tables: { engine: string; alone: WaitingRow; rows: WaitingRow[] }[],
  thinkMs: number,
  note: string,
  limits: string,
  measuredWith: string,
): string {
  const lines: string[] = [];
  const out = (line = '') => lines.push(line);
  const x = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}x` : '-');
  const load = (r: WaitingRow) => `${r.load[0].toFixed(1)} / ${r.load[1].toFixed(1)}`;
  const withCommand = tables.some((t) => t.alone.commandSeconds !== undefined);
  const command = (r: WaitingRow, alone: WaitingRow) =>
    withCommand
      ? ` ${r.commandSeconds?.toFixed(2) ?? '-'} s | ${alone.commandSeconds && r.commandSeconds ? x(r.commandSeconds / alone.commandSeconds) : '-'} | ${r.droppedAfterSeconds === undefined ? '-' : `${r.droppedAfterSeconds.toFixed(2)} s`} |`
      : '';
  out(BEGIN);
  out('## 6. Agents that wait');
  out();
  out(
    `Measured with \`${measuredWith}\`. The agent is a long-lived server (agent.url) that thinks ${thinkMs / 1000} s ` +
      'before each of its three tool calls (read, write, read back); each row runs max(64, concurrency) scenarios, ' +
      'head only, one repeat. The headline is what a user waits for: starting the engine, the template and the ' +
      'agent server (at the same time), the episodes, the report and closing the engine; with --cli, the whole ' +
      'command. The episodes phase is beside it: from the first episode started to the last one finished. ' +
      '"x alone" divides by one scenario run alone on the same engine in the same run; "x c=1 mean" by the mean ' +
      'episode at concurrency 1 (64 in a row: less noisy than a single run); the ideal is the number of waves, ' +
      'ceil(scenarios / concurrency). The episodes start without waiting for the pool (one database per episode ' +
      'running at once and as many spare): an episode that asks before the pool is made takes the next database ' +
      'being made. Reset is what each episode waited for its database before its agent could be served: nothing ' +
      'for a database still being prepared (the agent starts at once, and its first tool call waits for it: "db wait", ' +
      'timings.db_wait), a ready one taken from the pool (a database put back after an earlier episode: its change ' +
      'log\'s rows undone, sequences restored, verified against the template) without any await. "Start p99" adds ' +
      'the session lap (the gateway session opened): everything before the agent is called. Load is the ' +
      "machine's 1-minute load average when the row started / ended." +
      (withCommand
        ? ' "Whole command" is the same row run again as a user starts it, `node bin/stategate.mjs run --dir DIR ' +
          "--engine E` (the built dist/), timed from spawn to exit: Node's start, loading the CLI, the run, the exit. " +
          "On the postgres engine the command leaves dropping the run's databases to a child process that outlives " +
          'it (nothing it reports needs them); "dropped after exit" is how long that child took after the exit, and ' +
          'the next run starts only once it is done. In-process (the whole run), the run drops them before it returns.'
        : ''),
  );
  out();
  out(`${note}`);
  out();
  out(
    `| engine | concurrency | scenarios |${withCommand ? ' whole command | x alone | dropped after exit |' : ''} whole run | x alone | episodes phase | x alone | x c=1 mean | ideal | reset p50 | reset p99 | db wait p99 | start p99 | incomplete | load |`,
  );
  out(
    `|---|---:|---:|${withCommand ? '---:|---:|---:|' : ''}---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|`,
  );
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  for (const t of tables) {
    const c1 = t.rows.find((r) => r.concurrency === 1);
    const mean = c1 ? c1.seconds / c1.scenarios : Number.NaN;
    const row = (r: WaitingRow, label: string, ratios: string) =>
      out(
        `| ${t.engine} | ${label} | ${r.scenarios} |${command(r, t.alone)} ${r.totalSeconds.toFixed(2)} s | ${ratios} | ` +
          `${ms(r.reset.median)} | ${ms(r.reset.p99)} | ${ms(r.dbWait?.p99 ?? 0)} | ${ms(r.start.p99)} | ${r.failed} | ${load(r)} |`,
      );
    row(
      t.alone,
      '1 (alone)',
      `1.00x | ${t.alone.seconds.toFixed(2)} s | 1.00x | ${x(t.alone.seconds / mean)} | 1x`,
    );
    for (const r of t.rows) {
      row(
        r,
        String(r.concurrency),
        `${x(r.totalSeconds / t.alone.totalSeconds)} | ${r.seconds.toFixed(2)} s | ${x(r.seconds / t.alone.seconds)} | ` +
          `${x(r.seconds / mean)} | ${Math.ceil(r.scenarios / r.concurrency)}x`,
      );
    }
  }
  out();
  out('| target | measured | |');
  out('|---|---:|---|');
  const mark = (met: boolean) => (met ? 'met' : '**not met**');
  for (const t of tables) {
    const r64 = t.rows.find((r) => r.concurrency === 64 && r.scenarios === 64);
    const c1 = t.rows.find((r) => r.concurrency === 1);
    if (r64) {
      if (r64.commandSeconds && t.alone.commandSeconds) {
        const cmd = r64.commandSeconds / t.alone.commandSeconds;
        out(
          `| **${t.engine}: 64 scenarios at concurrency 64, whole command, within 1.3x of one alone** | ${x(cmd)} | ${mark(cmd <= 1.3)} |`,
        );
      }
      const whole = r64.totalSeconds / t.alone.totalSeconds;
      out(
        `| **${t.engine}: 64 scenarios at concurrency 64, whole run, within 1.3x of one alone** | ${x(whole)} | ${mark(whole <= 1.3)} |`,
      );
      const ratio = r64.seconds / t.alone.seconds;
      out(
        `| ${t.engine}: the same, episodes phase, within 1.2x of one alone | ${x(ratio)} | ${mark(ratio <= 1.2)} |`,
      );
      if (c1) {
        const vsMean = r64.seconds / (c1.seconds / c1.scenarios);
        out(
          `| ${t.engine}: the episodes phase against the mean episode at concurrency 1 | ${x(vsMean)} | ${mark(vsMean <= 1.2)} |`,
        );
      }
    }
    const worst = Math.max(...t.rows.map((r) => r.reset.p99));
    out(
      `| ${t.engine}: reset p99 <= 20 ms at every concurrency | ${worst.toFixed(1)} ms | ${mark(worst <= 20)} |`,
    );
  }
  out();
  out(limits);
  out(END);
  return lines.join('\n');
}

const BEGIN = '<!-- agents-waiting:begin -->';
const END = '<!-- agents-waiting:end -->';

/** The command line this process was run with, for the docs. */
function command(): string {
  return `node --import tsx bench/waiting.ts ${process.argv.slice(2).join(' ')}`.trim();
}

/** Replaces (or appends) the section between its markers in docs/performance.md; the rest is kept. */
export function writeWaitingSection(section: string): void {
  const file = resolve(import.meta.dirname, '..', 'docs', 'performance.md');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const at = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  const next =
    at >= 0 && end > at
      ? `${text.slice(0, at)}${section}${text.slice(end + END.length)}`
      : `${text.trimEnd()}\n\n${section}\n`;
  writeFileSync(file, next);
}

/**
 * What one database costs the postgres engine's server, measured beside the rows: `count` clones of
 * a small template (CREATE DATABASE ... TEMPLATE, the engine's WAL_LOG on PostgreSQL 15 and later),
 * `parallel` at a time, each on an admin session kept open (as the engine's pool makes them); then
 * its first connection and query; then each dropped, `parallel` at a time. Medians, ms.
 */
export interface ServerCosts {
  create: number;
  connect: number;
  drop: number;
  count: number;
  parallel: number;
}

export async function serverCosts(count = 16, parallel = 2): Promise<ServerCosts> {
  const open = async (database?: string) => {
    const url = new URL(ADMIN_URL);
    if (database) url.pathname = `/${database}`;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    return client;
  };
  const admin = await open();
  const template = 'bench_cost_template';
  const names = Array.from({ length: count + 1 }, (_, i) => `bench_cost_${i}`);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  try {
    const v = Number((await admin.query('SHOW server_version_num')).rows[0].server_version_num);
    const strategy = v >= 150000 ? ' STRATEGY WAL_LOG' : '';
    for (const n of [template, ...names]) await admin.query(`DROP DATABASE IF EXISTS ${n}`);
    await admin.query(`CREATE DATABASE ${template}`);
    const t = await open(template);
    await t.query(
      'CREATE TABLE items (id int PRIMARY KEY, qty int NOT NULL); INSERT INTO items SELECT g, 0 FROM generate_series(1, 1000) g',
    );
    await t.query('VACUUM (FREEZE, ANALYZE)');
    await t.end();
    const create: number[] = [];
    const connect: number[] = [];
    const drop: number[] = [];
    const lap = async (fn: () => Promise<unknown>, into: number[] | null) => {
      const t0 = performance.now();
      await fn();
      into?.push(performance.now() - t0);
    };
    // One warm-up (not counted): the template's pages come into the server's buffers.
    const queue = [...names];
    const first = queue.shift() as string;
    await lap(() => admin.query(`CREATE DATABASE ${first} TEMPLATE ${template}${strategy}`), null);
    const sessions = await Promise.all(Array.from({ length: parallel }, () => open()));
    await Promise.all(
      sessions.map(async (session) => {
        for (let name = queue.shift(); name; name = queue.shift()) {
          const made = name;
          await lap(() => session.query(`CREATE DATABASE ${made} TEMPLATE ${template}${strategy}`), create);
          await lap(async () => {
            const c = await open(made);
            await c.query('SELECT qty FROM items WHERE id = 1');
            await c.end();
          }, connect);
        }
      }),
    );
    const drops = names.slice(1);
    await Promise.all(
      sessions.map(async (session) => {
        for (let name = drops.shift(); name; name = drops.shift()) {
          const gone = name;
          await lap(() => session.query(`DROP DATABASE ${gone}`), drop);
        }
      }),
    );
    await Promise.all(sessions.map((c) => c.end()));
    return { create: median(create), connect: median(connect), drop: median(drop), count, parallel };
  } finally {
    for (const n of [...names, template])
      await admin.query(`DROP DATABASE IF EXISTS ${n}`).catch(() => undefined);
    await admin.end();
  }
}

/** What limits each number: the docs text, with the numbers of the rows it speaks of. */
function limitsText(tables: WaitingData['tables'], costs: ServerCosts | undefined): string {
  const row = (engine: string, c: number) =>
    tables.find((t) => t.engine === engine)?.rows.find((r) => r.concurrency === c && r.scenarios === c);
  const alone = (engine: string) => tables.find((t) => t.engine === engine)?.alone;
  const ratio = (engine: string) => {
    const r = row(engine, 64);
    const a = alone(engine);
    if (!r || !a) return null;
    return r.commandSeconds && a.commandSeconds
      ? r.commandSeconds / a.commandSeconds
      : r.totalSeconds / a.totalSeconds;
  };
  const x = (v: number | null) => (v === null ? '-' : `${v.toFixed(2)}x`);
  const ms = (v: number | undefined) => (v === undefined ? '-' : `${v.toFixed(0)} ms`);
  const pg64 = row('postgres', 64);
  const em64 = row('embedded', 64);
  const pgRatio = ratio('postgres');
  const emRatio = ratio('embedded');
  const met = (v: number | null) => (v !== null && v <= 1.3 ? 'met' : 'not met');
  const lines = ['What limits each number.', ''];
  lines.push(
    "- **Whole command and whole run.** Beside the episodes: Node's start and loading the CLI (the whole " +
      'command only), loading the suite, starting the engine (the embedded server, or connecting to the shared ' +
      "one), building the template and preparing the suite's SQL, at the same time as the agent server starts; " +
      'the pool of databases, made 4 at a time from then on while the first wave runs; then, as the last episode ' +
      'ends and while the report is written, the engine closes: the embedded server is stopped and its files ' +
      "removed; on the postgres engine the command hands the run's databases to a child process that drops " +
      'them after it has exited ("dropped after exit"), where the whole run (in-process, the library\'s default) ' +
      'drops them before it returns. What 64 scenarios add to one alone as a user runs it: loading 63 more ' +
      'scenario files (about 0.1 s), the three bursts of 64 tool calls and the ends of 64 episodes at once ' +
      '(below), and on the postgres engine 64 databases to make.',
  );
  const worstReset = tables
    .flatMap((t) => t.rows.map((r) => ({ engine: t.engine, r })))
    .sort((a, b) => b.r.reset.p99 - a.r.reset.p99)[0];
  lines.push(
    '- **Reset and db wait.** Reset is what an episode waited before its agent could be served: with the database ' +
      'prepared while the agent starts, nothing but the synchronous work of claiming one (no await: under a ' +
      'millisecond at the median). Its p99 is that work stretched by what the machine does meanwhile: the ' +
      "harness's thread paused for garbage collection or waiting for a core, while a second wave starts as the " +
      "first wave's episodes end and their databases are put back on the same 2 cores (at concurrency 32: " +
      'two waves)' +
      (worstReset
        ? ` (the worst here: ${worstReset.r.reset.p99.toFixed(1)} ms, ${worstReset.engine} at concurrency ` +
          `${worstReset.r.concurrency}, load ${worstReset.r.load[0].toFixed(1)} / ${worstReset.r.load[1].toFixed(1)})`
        : '') +
      '. The wait is at the agent\'s first tool call, after its 1 s think: "db wait" is how long that call ' +
      `waited for its database (at 64: embedded p99 ${ms(em64?.dbWait.p99)}, postgres p99 ${ms(pg64?.dbWait.p99)}).`,
  );
  const perDb = costs ? costs.create + costs.connect : null;
  lines.push(
    `- **The postgres engine at 64 (${x(pgRatio)}, ${met(pgRatio)}).** The server's work for each database. ` +
      (costs && perDb !== null
        ? `Measured beside the rows (${costs.count} clones of a small template, ${costs.parallel} at a time, medians): ` +
          `CREATE DATABASE ... TEMPLATE (WAL_LOG: the template's 7.5 MB of catalogs copied through the WAL) ` +
          `${ms(costs.create)}, its first connection and query ${ms(costs.connect)} more, and DROP DATABASE ` +
          `${ms(costs.drop)} (each waits for a checkpoint). 64 databases are then about ` +
          `${((64 * perDb) / 1000).toFixed(1)} s of the server's time to make, ` +
          `${((64 * perDb) / 1000 / cpus().length).toFixed(1)} s on ${cpus().length} cores with nothing else to do, ` +
          'against the 1 s the agents think before their first call; '
        : '') +
      'so the last ones are made while the first calls come and wait, and every call of those bursts shares the ' +
      'cores with the clones. A call that waited for its database uses the connection opened for it as it ' +
      'arrived (one backend per database: a second one per waiting call used to fill the connection budget in ' +
      'this wave, and from then on every tool call of the run started a backend of its own). That is the gap between the two engines: the embedded server (files in memory, ' +
      'fsync off, no full-page images) makes a clone with a copy of its files. ' +
      'Tried side by side and dropped (earlier runs): FILE_COPY clones (no sooner), the pool made 2, 8 or 16 ' +
      "at a time (no sooner), the pool started before the suite's statements are prepared (the preparing slows " +
      'by as much), each database dropped as its episode ends once no episode can take it (the drops then share ' +
      'the cores with the last episodes: 64 at 64 took 15.9 s instead of 12.0 s), WAL compression and no ' +
      "zero-filled WAL segments for the clones' sessions (no sooner). What would reach the target on such a " +
      'machine: fewer databases than episodes running at once, a server whose files need not reach a disk, or ' +
      'a longer think (the pool then has the time it needs).',
  );
  const emAlone = alone('embedded');
  const emEpisodes = em64 && emAlone ? em64.seconds / emAlone.seconds : null;
  lines.push(
    `- **Episodes phase at concurrency 64 and 128 (embedded at 64: ${x(emEpisodes)} of one alone; the whole ` +
      `command ${x(emRatio)}, ${met(emRatio)}).** CPU. ` +
      'One harness process runs the gateway, capture, grading and spooling of every episode, and the same cores ' +
      'run PostgreSQL (a new server process per episode, its first queries building its caches) and the agent ' +
      'server; all agents of a wave wake at the same instant, so their 192 (or 384) tool calls queue for the ' +
      "cores, and the 64 (or 128) episodes that end together queue for the harness's one thread (the capture is " +
      'one round trip to the database, and each episode is serialized once for the log and the spool). No lock ' +
      'or pool is shared between episodes.',
  );
  lines.push(
    '- **Postgres engine at 128.** The server allows 100 connections and is shared. The run reads what it leaves ' +
      '(max_connections less the superuser reserve, open sessions, the admin pool, 10% headroom: about 80 here) and ' +
      'every connection of an episode or a put-back takes a slot of that budget; pooled databases hold none while ' +
      'idle. At 128 the run may need more than the budget, so idle episode connections close 100 ms after their ' +
      'query and each tool call after a think opens a new one, and 128 databases are made: the postgres engine at ' +
      '128 costs far more than the embedded one (200 connections, files in memory).',
  );
  return lines.join('\n');
}

/** What a run measured, kept so the section can be written again without running (--from). */
interface WaitingData {
  command: string;
  think: number;
  note: string;
  /** The postgres engine's server cost per database, when the postgres engine was measured. */
  costs?: ServerCosts;
  tables: { engine: string; alone: WaitingRow; rows: WaitingRow[] }[];
}

const isMain = process.argv[1]?.endsWith('waiting.ts');
if (isMain) {
  const { arg, flag } = benchArgs(
    import.meta.url,
    ['think-ms', 'concurrency', 'postgres-concurrency', 'engines', 'scenarios', 'runs', 'data', 'from'],
    ['cli', 'write'],
  );
  const from = arg('from', '');
  let data: WaitingData;
  if (from) data = JSON.parse(readFileSync(from, 'utf8')) as WaitingData;
  else {
    const think = Number(arg('think-ms', '1000'));
    const scenarios = Number(arg('scenarios', '64'));
    const concurrencies = arg('concurrency', '1,8,32,64,128').split(',').map(Number);
    const postgresConcurrencies = arg('postgres-concurrency', arg('concurrency', '1,8,32,64,128'))
      .split(',')
      .map(Number);
    const engines = arg('engines', 'embedded,postgres').split(',') as ('embedded' | 'postgres')[];
    const runs = Number(arg('runs', '1'));
    const loadBefore = loadavg()[0];
    // First: a probe that fails fails before the rows are run.
    const costs = engines.includes('postgres') ? await serverCosts() : undefined;
    const tables: WaitingData['tables'] = [];
    for (const engine of engines) {
      const list = engine === 'postgres' ? postgresConcurrencies : concurrencies;
      const { alone, rows } = await waitingTable(engine, list, scenarios, think, runs, flag('cli'));
      tables.push({ engine, alone, rows });
      console.log(
        `${engine}: one scenario alone: ${alone.commandSeconds ? `whole command ${alone.commandSeconds.toFixed(2)} s, ` : ''}whole run ${alone.totalSeconds.toFixed(2)} s, episodes ${alone.seconds.toFixed(2)} s`,
      );
      for (const r of rows) {
        const waves = Math.ceil(r.scenarios / r.concurrency);
        console.log(
          `${engine} c=${r.concurrency} scenarios=${r.scenarios}: ${r.commandSeconds && alone.commandSeconds ? `whole command ${r.commandSeconds.toFixed(2)} s = ${(r.commandSeconds / alone.commandSeconds).toFixed(2)}x alone; ` : ''}whole run ${r.totalSeconds.toFixed(2)} s = ${(r.totalSeconds / alone.totalSeconds).toFixed(2)}x alone; episodes ${r.seconds.toFixed(2)} s = ${(r.seconds / alone.seconds).toFixed(2)}x alone (ideal ${waves}x); reset p50 ${r.reset.median.toFixed(1)} ms p99 ${r.reset.p99.toFixed(1)} ms; db wait p99 ${r.dbWait.p99.toFixed(1)} ms; start p99 ${r.start.p99.toFixed(1)} ms; incomplete ${r.failed}; load ${r.load[0].toFixed(1)} / ${r.load[1].toFixed(1)}`,
        );
      }
    }
    const note = `Machine: ${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown'}); load average ${loadBefore.toFixed(1)} when the bench started and ${loadavg()[0].toFixed(1)} when it ended (the load column gives it per row; other work on the machine slows every number, most of all the single alone run each ratio divides by).${runs > 1 ? ` Each row but concurrency 1 is the run with the median ${flag('cli') ? 'whole command' : 'whole run'} of ${runs} runs, the alone row included.` : ''}`;
    data = { command: command(), think, note, tables, costs };
    const save = arg('data', '');
    if (save) writeFileSync(save, JSON.stringify(data, null, 2));
  }
  const section = waitingSection(
    data.tables,
    data.think,
    data.note,
    limitsText(data.tables, data.costs),
    data.command,
  );
  console.log(section);
  if (flag('write')) writeWaitingSection(section);
}
