// The attack suites of the security tests: one scenario whose message carries what the attacking
// agent (a script from fixtures/) needs to know, run through the real pipeline on a chosen engine,
// head alone. What the agent found comes back in its reply; the tests assert on it and on disk.
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GradedEpisode } from '../../src/model/episode.js';
import type { Report } from '../../src/model/report.js';
import { runCompare } from '../../src/run/pipeline.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';

export const FIXTURES = join(import.meta.dirname, 'fixtures');

export interface AttackSuite {
  /** The suite's directory, which is also the checkout the agent runs in. */
  dir: string;
  /** A directory inside the checkout that the agent (whatever its user) may write. */
  drop: string;
}

/**
 * Writes a one-scenario suite whose agent is fixtures/<agent>; `context` reaches it on stdin. The
 * suite's directory is a new temporary directory only its owner can enter, in `parent`.
 */
export function attackSuite(
  agent: string,
  context: Record<string, unknown>,
  parent: string = tmpdir(),
): AttackSuite {
  const dir = mkdtempSync(join(parent, 'sg-attack-'));
  mkdirSync(join(dir, 'db'));
  mkdirSync(join(dir, 'scenarios'));
  const drop = join(dir, 'drop');
  mkdirSync(drop);
  chmodSync(drop, 0o777);
  writeFileSync(join(dir, 'db', 'schema.sql'), 'CREATE TABLE kv (k text NOT NULL, v text NOT NULL);\n');
  writeFileSync(join(dir, 'db', 'fixtures.yaml'), 'kv:\n  - { k: seed, v: fixture }\n');
  writeFileSync(
    join(dir, 'twin.yaml'),
    `tools:
  list:
    description: Every stored key and value.
    risk: read
    input: { type: object, additionalProperties: false }
    sql: SELECT k, v FROM kv ORDER BY k, v
    returns: many
`,
  );
  copyFileSync(join(FIXTURES, agent), join(dir, 'agent.mjs'));
  writeFileSync(
    join(dir, 'scenarios', 'attack.yaml'),
    `id: attack
input:
  message: attack
  context: ${JSON.stringify({ ...context, drop })}
expect:
  - id: untouched
    query: SELECT count(*) FROM kv
    equals: 1
`,
  );
  writeFileSync(
    join(dir, 'stategate.yml'),
    `version: 1
agent:
  command: node agent.mjs
  timeout: 120s
database:
  schema: [db/schema.sql]
  fixtures: [db/fixtures.yaml]
twins: [twin.yaml]
scenarios: [scenarios/*.yaml]
repeats: 1
`,
  );
  return { dir, drop };
}

/**
 * Turns the suite's agent into a served one: agent.serve starts fixtures/served.mjs, which runs the
 * attacking agent for each episode's POST; `setup` (a shell line) runs first in the serve command.
 */
export function asServed(suite: AttackSuite, setup?: string): void {
  copyFileSync(join(FIXTURES, 'served.mjs'), join(suite.dir, 'server.mjs'));
  const config = join(suite.dir, 'stategate.yml');
  const serve = setup ? `${setup} && exec node server.mjs` : 'node server.mjs';
  writeFileSync(
    config,
    readFileSync(config, 'utf8').replace(
      '  command: node agent.mjs\n',
      `  url: http://127.0.0.1:{port}/\n  serve: ${JSON.stringify(serve)}\n`,
    ),
  );
}

export interface AttackRun {
  report: Report;
  episode: GradedEpisode;
  /** The agent's reply, parsed: what it found. */
  found: any;
  out: string;
}

/** Runs the suite (head alone) on `engine`; `databaseUrl` overrides the test server for postgres. */
export async function runAttack(
  suite: AttackSuite,
  engine: 'embedded' | 'postgres',
  databaseUrl = TEST_DATABASE_URL,
): Promise<AttackRun> {
  const out = join(suite.dir, '.stategate');
  const { report } = await runCompare({
    base: null,
    head: suite.dir,
    repo: suite.dir,
    out,
    engine,
    databaseUrl: engine === 'postgres' ? databaseUrl : undefined,
  });
  const [episode] = readFileSync(join(out, 'episodes.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as GradedEpisode);
  const reply = episode.record.agent.result?.reply;
  if (reply === undefined)
    throw new Error(
      `the agent printed no result: ${episode.record.agent.resultError}\n${episode.record.agent.stderr}`,
    );
  return { report, episode, found: JSON.parse(reply), out };
}

/** Host pids whose command line contains `token` (zombies excluded). */
export function processesWith(token: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(token)) found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}
