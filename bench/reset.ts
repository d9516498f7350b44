// Per-episode reset: cloning the template (both CREATE DATABASE strategies) against the naive reset
// (a new database built from schema and fixtures every time), on the postgres and embedded engines.
// Run: node --import tsx bench/reset.ts [--sizes 10,1000,100000] [--reps 9]
import pg from 'pg';
import { applySqlFile, insertRows } from '../src/sandbox/apply.js';
import type { CloneStrategy } from '../src/sandbox/cluster.js';
import { openEmbeddedEngine, startEmbeddedServer } from '../src/sandbox/embedded.js';
import { databaseUrl, ident } from '../src/sandbox/names.js';
import { createPostgresEngine } from '../src/sandbox/postgres.js';
import { sessionOf } from '../src/sandbox/sandbox.js';
import { TypeNames } from '../src/sandbox/type-names.js';
import type { Engine, TemplateSpec } from '../src/sandbox/types.js';
import { benchArgs } from './args.js';

const { arg } = benchArgs(import.meta.url, ['sizes', 'reps']);
const SIZES = arg('sizes', '10,1000,100000').split(',').map(Number);
const REPS = Number(arg('reps', '9'));
const NAIVE_REPS = Math.max(3, Math.floor(REPS / 3));
const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const SCHEMA = `CREATE TABLE items (
  id integer PRIMARY KEY, name text NOT NULL, qty integer NOT NULL DEFAULT 0,
  price numeric(10,2) NOT NULL, meta jsonb, created timestamptz NOT NULL DEFAULT now());
CREATE INDEX items_name ON items (name);`;

function spec(rows: number): TemplateSpec {
  const items = Array.from({ length: rows }, (_, i) => ({
    id: i + 1,
    name: `item-${i + 1}`,
    qty: i % 17,
    price: ((i * 7) % 1000) / 10,
    meta: { color: ['red', 'green', 'blue'][i % 3], tags: [i % 5] },
  }));
  return {
    schema: [{ file: 'schema.sql', sql: SCHEMA }],
    fixtures: [{ file: 'items.yaml', rows: { items } }],
  };
}

interface Stats {
  median: number;
  min: number;
  max: number;
}

function stats(ms: number[]): Stats {
  const s = [...ms].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], min: s[0], max: s[s.length - 1] };
}

const fmt = (s: Stats) => `${s.median.toFixed(1)} ms [${s.min.toFixed(1)}-${s.max.toFixed(1)}]`;

async function timeClones(engine: Engine, rows: number): Promise<Stats> {
  const template = await engine.buildTemplate(spec(rows));
  const times: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now();
    const sandbox = await template.clone(`bench-${i}`);
    // A reset is done when the sandbox answers its first query.
    await sandbox.query('SELECT 1');
    times.push(performance.now() - t0);
    await sandbox.dispose();
  }
  return stats(times);
}

/** The naive reset: a new database, then schema and fixtures, every episode. */
async function timeNaive(adminUrl: string, rows: number): Promise<Stats> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const s = spec(rows);
  const times: number[] = [];
  try {
    for (let i = 0; i < NAIVE_REPS; i++) {
      const name = `sg_bench${Math.random().toString(16).slice(2, 6)}_naive`;
      const t0 = performance.now();
      await admin.query(`CREATE DATABASE ${ident(name)}`);
      const client = new pg.Client({ connectionString: databaseUrl(adminUrl, name) });
      await client.connect();
      const session = sessionOf(client, new TypeNames());
      for (const f of s.schema) await applySqlFile(session, f.file, f.sql);
      await client.query('BEGIN');
      for (const f of s.fixtures)
        if ('rows' in f) for (const [t, r] of Object.entries(f.rows)) await insertRows(session, t, r, f.file);
      await client.query('COMMIT');
      times.push(performance.now() - t0);
      await client.end();
      await admin.query(`DROP DATABASE ${ident(name)} WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
  return stats(times);
}

/** What change capture costs at the largest size: a bulk update with and without the triggers, and captureDiff. */
async function timeCapture(engine: Engine, adminUrl: string, rows: number): Promise<void> {
  const template = await engine.buildTemplate(spec(rows));
  const sandbox = await template.clone('capture');
  const bulk = `UPDATE items SET qty = qty + 1 WHERE id <= ${Math.min(rows, 10_000)}`;
  try {
    await sandbox.markInitial();
    let t0 = performance.now();
    await sandbox.query('UPDATE items SET qty = qty + 1 WHERE id = 1');
    const one = await sandbox.captureDiff();
    const diffOne = performance.now() - t0;
    t0 = performance.now();
    await sandbox.query(bulk);
    const withCapture = performance.now() - t0;
    t0 = performance.now();
    const many = await sandbox.captureDiff();
    const diffMany = performance.now() - t0;
    // The same update on a plain database without capture triggers.
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    const plain = `sg_bench${Math.random().toString(16).slice(2, 6)}_plain`;
    await admin.query(`CREATE DATABASE ${ident(plain)} TEMPLATE ${ident(template.name)}`);
    const client = new pg.Client({ connectionString: databaseUrl(adminUrl, plain) });
    await client.connect();
    await client.query('DROP SCHEMA stategate CASCADE');
    t0 = performance.now();
    await client.query(bulk);
    const without = performance.now() - t0;
    await client.end();
    await admin.query(`DROP DATABASE ${ident(plain)} WITH (FORCE)`);
    await admin.end();
    console.log(
      `capture at ${rows.toLocaleString('en')} rows: update 1 row + captureDiff ${diffOne.toFixed(0)} ms ` +
        `(${Object.keys(one.tables).length} table changed); ${bulk.split(' WHERE')[0]} on ${Math.min(rows, 10_000).toLocaleString('en')} rows: ` +
        `${withCapture.toFixed(0)} ms with capture vs ${without.toFixed(0)} ms without (${(withCapture / without).toFixed(1)}x); ` +
        `captureDiff of ${many.tables.items.updated.length.toLocaleString('en')} updated rows ${diffMany.toFixed(0)} ms`,
    );
  } finally {
    await sandbox.dispose();
  }
}

async function benchEngine(
  label: string,
  adminUrl: string,
  open: (strategy: CloneStrategy, clonesAhead: number) => Promise<Engine>,
  defaultStrategy: CloneStrategy,
) {
  console.log(`\n## ${label}`);
  console.log(
    `| fixture rows | on demand, WAL_LOG | on demand, FILE_COPY | made ahead (${defaultStrategy}) | naive rebuild | naive / on demand | naive / made ahead |`,
  );
  console.log('|---:|---|---|---|---|---:|---:|');
  for (const rows of SIZES) {
    const result: Record<string, Stats> = {};
    for (const [key, strategy, ahead] of [
      ['WAL_LOG', 'WAL_LOG', 0],
      ['FILE_COPY', 'FILE_COPY', 0],
      ['ahead', defaultStrategy, 2],
    ] as const) {
      const engine = await open(strategy, ahead);
      try {
        result[key] = await timeClones(engine, rows);
      } finally {
        await engine.close();
      }
    }
    const naive = await timeNaive(adminUrl, rows);
    const onDemand = result[defaultStrategy].median;
    console.log(
      `| ${rows.toLocaleString('en')} | ${fmt(result.WAL_LOG)} | ${fmt(result.FILE_COPY)} | ${fmt(result.ahead)} | ${fmt(naive)} | ` +
        `${(naive.median / onDemand).toFixed(1)}x | ${(naive.median / result.ahead.median).toFixed(0)}x |`,
    );
  }
  const engine = await open(defaultStrategy, 0);
  try {
    await timeCapture(engine, adminUrl, Math.max(...SIZES));
  } finally {
    await engine.close();
  }
}

console.log(
  `reset benchmark: ${REPS} clones and ${NAIVE_REPS} naive rebuilds per cell; median [min-max]; ` +
    'a reset ends when the sandbox answers its first query; made ahead: clonesAhead 2, one clone at a time',
);
await benchEngine(
  'postgres engine (system server)',
  ADMIN_URL,
  (cloneStrategy, clonesAhead) => createPostgresEngine({ adminUrl: ADMIN_URL, cloneStrategy, clonesAhead }),
  'WAL_LOG',
);
const t0 = performance.now();
const server = await startEmbeddedServer();
console.log(`\nembedded server: initdb + start in ${(performance.now() - t0).toFixed(0)} ms`);
try {
  await benchEngine(
    'embedded engine',
    server.adminUrl,
    (cloneStrategy, clonesAhead) => openEmbeddedEngine(server, { cloneStrategy, clonesAhead }),
    'WAL_LOG',
  );
} finally {
  await server.stop();
}
