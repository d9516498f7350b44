// The example agents written from docs/agent-protocol.md alone (Python with the standard library
// over HTTP, TypeScript on the official MCP client), run with the command their README gives, as the
// base against the demo's buggy v1.3.0: every expectation passes on the example, and each case gets
// the class the demo's v1.2.4 -> v1.3.0 gets.
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { GradedEpisode } from '../../src/model/episode.js';
import { runCompare } from '../../src/run/pipeline.js';
import { agentNodeModules } from '../helpers/agent-dir.js';
import { ROOT, writeDemoFiles } from '../helpers/demo-repo.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

let modules: string | undefined;
function nodeModules(): string {
  if (!modules) {
    const found = agentNodeModules(ROOT);
    if (found.copy) dirs.push(found.copy);
    modules = found.path;
  }
  return modules;
}

/** The `command` of the agent section the example's README shows. */
function readmeCommand(example: string): string {
  const readme = readFileSync(join(ROOT, 'examples', example, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => parse(m[1]));
  const agent = blocks.find((b) => b?.agent?.command)?.agent;
  if (!agent) throw new Error(`examples/${example}/README.md shows no agent.command`);
  return agent.command as string;
}

/** A checkout of the demo at `version` with both examples, node_modules linked in, and `command`. */
function side(version: string, command?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-examples-'));
  dirs.push(dir);
  writeDemoFiles(dir, version);
  for (const example of ['python-agent', 'mcp-agent-ts']) {
    cpSync(join(ROOT, 'examples', example), join(dir, 'examples', example), { recursive: true });
  }
  symlinkSync(nodeModules(), join(dir, 'node_modules'), 'dir');
  if (command) {
    const config = parse(readFileSync(join(dir, 'stategate.yml'), 'utf8'));
    config.agent.command = command;
    writeFileSync(join(dir, 'stategate.yml'), stringify(config));
  }
  return dir;
}

const DEMO_BLOCK: Record<string, string> = {
  'refund-timeout-after-mutation': 'new-critical-failure',
  'refund-success-without-effect': 'new-critical-failure',
  'refund-happy-path': 'regressed',
};

describe.each([
  ['python-agent', 'http'],
  ['mcp-agent-ts', 'mcp'],
])('examples/%s', (example, via) => {
  it('passes every expectation, and against v1.3.0 gets the demo classes', { timeout: 600_000 }, async () => {
    const command = readmeCommand(example);
    const base = side('v1.3.1', command);
    const head = side('v1.3.0');
    const out = join(head, '.stategate');
    const { report } = await runCompare({
      base,
      head,
      repo: head,
      out,
      repeats: 1,
      engine: 'postgres',
      databaseUrl: ADMIN_URL,
    });
    const episodes = readFileSync(join(out, 'episodes.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as GradedEpisode);
    const baseEpisodes = episodes.filter((g) => g.record.side === 'base');
    expect(baseEpisodes).toHaveLength(10);
    for (const g of baseEpisodes) {
      const failed = g.results.filter((r) => r.verdict !== 'pass').map((r) => r.id);
      expect(`${g.record.scenario}: ${failed.join(', ')}`).toBe(`${g.record.scenario}: `);
      // It took its tools the way its README says, and printed a result the harness accepted.
      expect(new Set(g.record.calls.map((c) => c.via))).toEqual(new Set([via]));
      expect(g.record.agent.resultError).toBeUndefined();
    }
    const classes = Object.fromEntries(report.cases.map((c) => [c.id, c.class]));
    expect(Object.keys(classes)).toHaveLength(10);
    for (const [id, cls] of Object.entries(classes)) {
      expect(`${id}: ${cls}`).toBe(`${id}: ${DEMO_BLOCK[id] ?? 'unchanged'}`);
    }
    expect(report.verdict).toBe('BLOCK');
  });
});
