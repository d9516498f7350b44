// Real agents end to end through runCompare: an agent on the official MCP client, a long-lived agent
// server with no Stategate imports, and an agent writing straight to its exposed episode database.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { GradedEpisode } from '../../src/model/episode.js';
import type { Report } from '../../src/model/report.js';
import { runCompare } from '../../src/run/pipeline.js';
import { agentNodeModules } from '../helpers/agent-dir.js';
import { ROOT, writeDemoFiles } from '../helpers/demo-repo.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const FIXTURES = join(import.meta.dirname, 'fixtures');
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

// Made once, the first time a side needs it, and removed with the other directories.
let modules: { path: string; copy: string | null } | undefined;
function nodeModules(): { path: string; copy: string | null } {
  if (!modules) {
    modules = agentNodeModules(ROOT);
    if (modules.copy) dirs.push(modules.copy);
  }
  return modules;
}

/** A side checkout of the demo at `version`, with stategate.yml edited and node_modules linked in. */
function demoSide(
  version: string,
  edit: (config: Record<string, unknown>) => void,
  scenarios?: string[],
): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-agents-'));
  dirs.push(dir);
  writeDemoFiles(dir, version);
  // The agents import @modelcontextprotocol/sdk and pg the way a checkout with its dependencies would.
  symlinkSync(nodeModules().path, join(dir, 'node_modules'), 'dir');
  if (scenarios) {
    rmSync(join(dir, 'scenarios'), { recursive: true });
    mkdirSync(join(dir, 'scenarios'));
    for (const s of scenarios) cpSync(join(ROOT, 'scenarios', s), join(dir, 'scenarios', s));
  }
  const config = parse(readFileSync(join(dir, 'stategate.yml'), 'utf8')) as Record<string, unknown>;
  edit(config);
  writeFileSync(join(dir, 'stategate.yml'), stringify(config));
  return dir;
}

function classesOf(report: Report): Record<string, string> {
  return Object.fromEntries(report.cases.map((c) => [c.id, c.class]));
}

function episodesOf(out: string): GradedEpisode[] {
  return readFileSync(join(out, 'episodes.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as GradedEpisode);
}

/** What the gateway recorded of each episode, without timing and transport, by side and repeat. */
function recordedCalls(out: string): Record<string, unknown[]> {
  const byEpisode: Record<string, unknown[]> = {};
  for (const g of episodesOf(out)) {
    byEpisode[g.record.episode] = g.record.calls.map((c) => ({
      seq: c.seq,
      tool: c.tool,
      args: c.args,
      status: c.status,
      error: c.error?.code,
      fault: c.fault,
      mutated: c.mutated,
      replay: c.replay,
      changes: c.changes,
    }));
  }
  return byEpisode;
}

function viasOf(out: string): Set<string> {
  return new Set(episodesOf(out).flatMap((g) => g.record.calls.map((c) => c.via)));
}

const TIMEOUT_SCENARIO = 'refund-timeout-after-mutation';
const BLOCK_CLASSES: Record<string, string> = {
  'refund-timeout-after-mutation': 'new-critical-failure',
  'refund-success-without-effect': 'new-critical-failure',
  'refund-happy-path': 'regressed',
};

describe('an agent on the official MCP client', () => {
  it('records the same calls and gets the same class as the HTTP agent', { timeout: 300_000 }, async () => {
    const runs: Record<string, { out: string; report: Report }> = {};
    for (const [name, script] of [
      ['http', 'agent.mjs'],
      ['mcp', 'mcp-agent.mjs'],
    ] as const) {
      const side = (version: string) =>
        demoSide(
          version,
          (c) => {
            (c.agent as Record<string, unknown>).command = `node examples/refund-agent/${script}`;
          },
          [`${TIMEOUT_SCENARIO}.yaml`],
        );
      const base = side('v1.2.4');
      const head = side('v1.3.0');
      const out = join(head, '.stategate', name);
      const { report } = await runCompare({
        base,
        head,
        repo: head,
        out,
        repeats: 2,
        engine: 'postgres',
        databaseUrl: ADMIN_URL,
      });
      runs[name] = { out, report };
    }
    const { http, mcp } = runs;
    expect(classesOf(mcp.report)).toEqual({ [TIMEOUT_SCENARIO]: 'new-critical-failure' });
    expect(classesOf(mcp.report)).toEqual(classesOf(http.report));
    expect(mcp.report.verdict).toBe('BLOCK');
    expect(viasOf(mcp.out)).toEqual(new Set(['mcp']));
    expect(viasOf(http.out)).toEqual(new Set(['http']));
    const mcpCalls = recordedCalls(mcp.out);
    expect(Object.keys(mcpCalls)).toHaveLength(4);
    expect(mcpCalls).toEqual(recordedCalls(http.out));
    // The head's blind retry is in both records: two mutating refund_payment calls, the first timed out.
    for (const [episode, calls] of Object.entries(mcpCalls)) {
      const refunds = (calls as { tool: string; status: number; mutated: boolean }[])
        .filter((c) => c.tool === 'refund_payment')
        .map((c) => [c.status, c.mutated]);
      expect(refunds, episode).toEqual(
        episode.includes('.head.')
          ? [
              [504, true],
              [200, true],
            ]
          : [[504, true]],
      );
    }
  });
});

describe('an agent server (agent.url + agent.serve)', () => {
  it('gives the demo the same classes as the command agent', { timeout: 600_000 }, async () => {
    // Both sides share one agent section: {port} gives each side's server a port of its own.
    const serverSide = async (version: string) =>
      demoSide(version, (c) => {
        c.agent = {
          url: 'http://127.0.0.1:{port}/',
          serve: 'node examples/refund-agent/server.mjs',
          timeout: '30s',
        };
      });
    const commandSide = (version: string) => demoSide(version, () => undefined);
    const reports: Record<string, Report> = {};
    for (const [name, side] of [
      ['server', serverSide],
      ['command', commandSide],
    ] as const) {
      const base = await side('v1.2.4');
      const head = await side('v1.3.0');
      const { report } = await runCompare({
        base,
        head,
        repo: head,
        out: join(head, '.stategate'),
        repeats: 1,
        engine: 'postgres',
        databaseUrl: ADMIN_URL,
      });
      reports[name] = report;
    }
    const classes = classesOf(reports.server);
    expect(Object.keys(classes)).toHaveLength(10);
    for (const [id, cls] of Object.entries(classes)) {
      expect(`${id}: ${cls}`).toBe(`${id}: ${BLOCK_CLASSES[id] ?? 'unchanged'}`);
    }
    expect(classes).toEqual(classesOf(reports.command));
    expect(reports.server.verdict).toBe('BLOCK');
    expect(reports.command.verdict).toBe('BLOCK');
  });
});

/** A suite of one scenario whose agent writes to its exposed database directly. */
function exposeSuite(trySuperuser: boolean): string {
  const dir = demoSide('v1.3.1', (c) => {
    c.agent = {
      command: 'node expose-agent.mjs',
      timeout: '90s',
      env: { TRY_SUPERUSER: trySuperuser ? 1 : 0 },
    };
    (c.database as Record<string, unknown>).expose = true;
    c.concurrency = 2;
  });
  rmSync(join(dir, 'scenarios'), { recursive: true });
  mkdirSync(join(dir, 'scenarios'));
  cpSync(join(FIXTURES, 'expose', 'direct-write.yaml'), join(dir, 'scenarios', 'direct-write.yaml'));
  cpSync(join(FIXTURES, 'expose', 'expose-agent.mjs'), join(dir, 'expose-agent.mjs'));
  return dir;
}

describe('an agent with database.expose', () => {
  for (const engine of ['postgres', 'embedded'] as const) {
    it(`on the ${engine} engine: its own writes are diffed and graded, other databases refuse it`, {
      timeout: 300_000,
    }, async () => {
      const dir = exposeSuite(engine === 'embedded');
      const out = join(dir, '.stategate');
      const { report } = await runCompare({
        base: null,
        head: dir,
        repo: dir,
        out,
        repeats: 2,
        engine,
        databaseUrl: engine === 'postgres' ? ADMIN_URL : undefined,
      });
      expect(report.engine).toBe(engine);
      const episodes = episodesOf(out);
      expect(episodes).toHaveLength(2);
      for (const g of episodes) {
        expect(g.record.infraError).toBeUndefined();
        expect(g.record.calls).toEqual([]);
        const orders = g.record.diff.tables.orders;
        expect(orders.updated).toHaveLength(1);
        expect(orders.updated[0]).toMatchObject({
          key: { id: 'ORD-1001' },
          before: { status: 'delivered' },
          after: { status: 'cancelled' },
        });
        expect(g.record.diff.tables.emails.inserted).toHaveLength(1);
        const reply = g.record.agent.result?.reply ?? `(no result: ${g.record.agent.stderr})`;
        const verdicts = Object.fromEntries(g.results.map((r) => [r.id, r.verdict]));
        expect(verdicts, reply).toMatchObject({
          'order-cancelled': 'pass',
          'status-is-cancelled': 'pass',
          'one-email': 'pass',
          'no-tools': 'pass',
          'template-refused': 'pass',
          'peer-refused': 'pass',
        });
        // The template refuses every connection; another episode's database refuses this role.
        expect(reply).toMatch(/template: (55000|42501)/);
        expect(reply).toContain('peer: 42501');
        // With password authentication another role's password is needed too (the server here trusts).
        if (engine === 'embedded') expect(reply).toContain('peer as postgres: 28P01');
        else expect(reply).not.toContain('peer as postgres');
        expect(g.passed).toBe(true);
      }
      expect(report.verdict).toBe('PASS');
    });
  }
});
