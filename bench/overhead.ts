// Bench 1 and 2: what one episode costs the harness, stage by stage, through the real pipeline with
// the trivial agent; and the same reset against the naive harness (rebuild from schema and fixtures,
// or a fresh embedded server per episode), measured side by side.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { gradeEpisode } from '../src/grade/index.js';
import type { GradedEpisode } from '../src/model/episode.js';
import { loadPinnedSuite } from '../src/run/load.js';
import { runCompare } from '../src/run/pipeline.js';
import { startEmbeddedServer } from '../src/sandbox/embedded.js';
import { databaseUrl, ident } from '../src/sandbox/names.js';
import { createPostgresEngine } from '../src/sandbox/postgres.js';
import { ADMIN_URL, benchSuite, fixtureSql, SCHEMA, summary } from './suite.js';

export interface StageMedians {
  rows: number;
  episodes: number;
  reset: number;
  session: number;
  agent: number;
  gatewayClose: number;
  capture: number;
  queries: number;
  grading: number;
  /** A clone made on demand rather than ahead (the pipeline makes it during the previous episode). */
  clone: number;
  cleanup: number;
  nodeStart: number;
  /** Everything but the agent: reset, session, gateway close, capture, queries and grading. */
  harness: number;
}

/** Median milliseconds of a fresh `node` process that does nothing: the floor of any command agent. */
export async function nodeStartMedian(reps: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
      child.on('error', reject);
      child.on('exit', () => resolve());
    });
    times.push(performance.now() - t0);
  }
  return summary(times).median;
}

/** Runs `episodes` episodes of the trivial agent on `rows` fixture rows and takes each stage's median. */
export async function stageMedians(rows: number, episodes: number, nodeStart: number): Promise<StageMedians> {
  const suite = benchSuite(rows, episodes);
  try {
    const out = join(suite.dir, 'out');
    await runCompare({
      base: null,
      head: suite.dir,
      repo: suite.dir,
      out,
      engine: 'postgres',
      databaseUrl: ADMIN_URL,
      concurrency: 1,
      repeats: 1,
    });
    const graded = readFileSync(join(out, 'episodes.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as GradedEpisode);
    const failed = graded.filter((g) => !g.passed);
    if (failed.length > 0) throw new Error(`bench: ${failed.length} trivial episodes failed at ${rows} rows`);
    const med = (key: string) => summary(graded.map((g) => g.record.timings[key] ?? 0)).median;

    // Grading is pure: time it again on the recorded episodes, in-process.
    const loaded = await loadPinnedSuite(join(suite.dir, 'stategate.yml'));
    const byId = new Map(loaded.scenarios.map((s) => [s.id, s]));
    const grading = graded.map((g) => {
      const t0 = performance.now();
      gradeEpisode(byId.get(g.record.scenario)!, g.record, loaded.tools);
      return performance.now() - t0;
    });
    const { clone, cleanup } = await cloneAndCleanupMedians(loaded.template, Math.min(episodes, 15));
    const m = {
      reset: med('reset'),
      session: med('session'),
      agent: med('agent'),
      gatewayClose: med('gateway_close'),
      capture: med('capture'),
      queries: med('queries'),
      grading: summary(grading).median,
    };
    return {
      rows,
      episodes: graded.length,
      ...m,
      clone,
      cleanup,
      nodeStart,
      harness: m.reset + m.session + m.gatewayClose + m.capture + m.queries + m.grading,
    };
  } finally {
    rmSync(suite.dir, { recursive: true, force: true });
  }
}

/**
 * Making a clone on demand (CREATE DATABASE ... TEMPLATE and its first connection, which the pipeline
 * does ahead, while the previous episode runs) and dropping it (done off the critical path), medians.
 */
async function cloneAndCleanupMedians(
  spec: Parameters<Awaited<ReturnType<typeof createPostgresEngine>>['buildTemplate']>[0],
  reps: number,
): Promise<{ clone: number; cleanup: number }> {
  const engine = await createPostgresEngine({ adminUrl: ADMIN_URL, clonesAhead: 0 });
  try {
    const template = await engine.buildTemplate(spec);
    const clones: number[] = [];
    const drops: number[] = [];
    for (let i = 0; i < reps; i++) {
      const t0 = performance.now();
      const sandbox = await template.clone(`cleanup-${i}`);
      await sandbox.query('SELECT 1');
      const t1 = performance.now();
      await sandbox.dispose();
      drops.push(performance.now() - t1);
      clones.push(t1 - t0);
    }
    return { clone: summary(clones).median, cleanup: summary(drops).median };
  } finally {
    await engine.close();
  }
}

/** Builds one database the naive way: CREATE DATABASE, then the schema and fixtures. */
async function naiveBuild(adminUrl: string, admin: pg.Client, rows: number): Promise<string> {
  const name = `sg_bench${Math.random().toString(16).slice(2, 10)}_naive`;
  await admin.query(`CREATE DATABASE ${ident(name)}`);
  const client = new pg.Client({ connectionString: databaseUrl(adminUrl, name) });
  await client.connect();
  try {
    await client.query(SCHEMA);
    await client.query(fixtureSql(rows));
  } finally {
    await client.end();
  }
  return name;
}

/** The naive reset on the same server: a new database from schema and fixtures per episode (median ms). */
export async function naiveRebuildMedian(rows: number, reps: number): Promise<number> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const times: number[] = [];
  try {
    for (let i = 0; i < reps; i++) {
      const t0 = performance.now();
      const name = await naiveBuild(ADMIN_URL, admin, rows);
      times.push(performance.now() - t0);
      await admin.query(`DROP DATABASE ${ident(name)} WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
  return summary(times).median;
}

/** The most naive reset: a fresh embedded server per episode, then schema and fixtures (median ms). */
export async function freshServerMedian(rows: number, reps: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    const server = await startEmbeddedServer();
    try {
      const admin = new pg.Client({ connectionString: server.adminUrl });
      await admin.connect();
      try {
        await naiveBuild(server.adminUrl, admin, rows);
      } finally {
        await admin.end();
      }
      times.push(performance.now() - t0);
    } finally {
      await server.stop();
    }
  }
  return summary(times).median;
}
