// docs/agent-protocol.md is the whole agent contract on one page: these checks hold it to the code.
// Every variable and request field the harness sets is on it, every field of the result schema, the
// outcome values, the limits it quotes; its result examples parse; the pages that touch on the
// protocol link to it.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_OUTPUT_BYTES } from '../../src/agent/capture.js';
import { episodeEnv } from '../../src/agent/env.js';
import { DEFAULT_GRACE_MS } from '../../src/agent/process-group.js';
import { checkAgentResult } from '../../src/agent/result.js';
import { episodeBody } from '../../src/agent/server.js';
import type { EpisodeVars } from '../../src/agent/types.js';
import { DATABASE_URL_VAR } from '../../src/config/harness-secrets.js';
import { OUTCOMES } from '../../src/model/agent-result.js';
import { ROOT } from '../helpers/demo-repo.js';

const PAGE = 'docs/agent-protocol.md';
const page = readFileSync(join(ROOT, PAGE), 'utf8');
const vars: EpisodeVars = {
  toolsUrl: 'http://127.0.0.1:1/e/t',
  mcpUrl: 'http://127.0.0.1:1/e/t/mcp',
  episode: 's.head.r1',
  scenario: 's',
  seed: 7,
  side: 'head',
  databaseUrl: 'postgres://agent@127.0.0.1:1/db',
  // What the model gateway gives an episode with an openai and an anthropic entry of models.
  modelEnv: {
    OPENAI_BASE_URL: 'http://127.0.0.1:1/m/t/openai/v1',
    OPENAI_API_KEY: 'sg-episode-0',
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:1/m/t/claude',
    ANTHROPIC_API_KEY: 'sg-episode-0',
  },
  conversation: true,
};
const code = (name: string) => `\`${name}\``;

/** Every property path of a JSON Schema object: reply, usage, usage.input_tokens, ... */
function propertyPaths(schema: Record<string, any>, prefix = ''): string[] {
  return Object.entries((schema.properties ?? {}) as Record<string, any>).flatMap(([name, sub]) => [
    `${prefix}${name}`,
    ...propertyPaths(sub, `${prefix}${name}.`),
  ]);
}

describe(PAGE, () => {
  it('names every variable an episode gets, PORT for agent.serve, and no STATEGATE_ variable that does not exist', () => {
    const set = Object.keys(episodeEnv(vars));
    for (const name of [...set, 'PORT']) expect(page, name).toContain(code(name));
    const named = new Set(page.match(/STATEGATE_[A-Z_]+/g));
    expect([...named].filter((n) => !set.includes(n) && n !== DATABASE_URL_VAR)).toEqual([]);
  });

  it("names every field of a server's request", () => {
    for (const field of Object.keys(episodeBody({ message: 'm', context: {} }, vars)))
      expect(page, field).toContain(code(field));
  });

  it('names every field of the committed result schema and every outcome', () => {
    const schema = JSON.parse(readFileSync(join(ROOT, 'schema', 'agent-result.schema.json'), 'utf8'));
    const paths = propertyPaths(schema);
    expect(paths).toEqual(expect.arrayContaining(['reply', 'outcome', 'usage.cost_usd']));
    for (const path of paths) expect(page, path).toContain(code(path));
    expect(schema.properties.outcome.enum).toEqual([...OUTCOMES]);
    for (const outcome of OUTCOMES) expect(page, outcome).toContain(code(outcome));
    expect(schema.required).toEqual(['reply']);
  });

  it('has a result schema that accepts and refuses what the harness does', () => {
    const schema = JSON.parse(readFileSync(join(ROOT, 'schema', 'agent-result.schema.json'), 'utf8'));
    const valid = new Ajv2020({ strict: false }).compile(schema);
    for (const value of [
      { reply: 'ok' },
      { reply: 'ok', outcome: 'ESCALATED', tool_calls: [{ tool: 'x' }], usage: { cost_usd: 0.01 }, extra: 1 },
      { reply: 'ok', outcome: 'success' },
      { outcome: 'SUCCESS' },
      { reply: 'ok', usage: { input_tokens: -1 } },
      { reply: 'ok', tool_calls: {} },
      { reply: 7 },
      ['reply'],
    ]) {
      expect(valid(value), JSON.stringify(value)).toBe(checkAgentResult(value).resultError === undefined);
    }
  });

  it('shows results the harness accepts, and quotes its refusal of a lower-case outcome word for word', () => {
    const blocks = [...page.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]));
    const results = blocks.filter((b) => 'reply' in b);
    expect(results.length).toBeGreaterThanOrEqual(1);
    for (const r of results) expect(checkAgentResult(r).resultError).toBeUndefined();
    const stdin = blocks.find((b) => 'message' in b && !('tools_url' in b));
    expect(Object.keys(stdin)).toEqual(['message', 'context']);
    const refused = checkAgentResult({ reply: 'ok', outcome: 'success' }).resultError!;
    expect(page).toContain(`last line of stdout: ${refused}`);
  });

  it('quotes the limits the code has', () => {
    expect(DEFAULT_MAX_OUTPUT_BYTES).toBe(1024 * 1024);
    expect(page).toContain('capped\nat 1 MiB');
    expect(page).toContain(`SIGKILL ${DEFAULT_GRACE_MS / 1000} s later`);
  });

  it('links only to files that exist', () => {
    for (const [, target] of page.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)/g)) {
      if (/^https?:/.test(target)) continue;
      expect(existsSync(resolve(dirname(join(ROOT, PAGE)), target)), target).toBe(true);
    }
  });

  it('is linked from every page that explains part of it', () => {
    for (const [file, link] of [
      ['README.md', 'docs/agent-protocol.md'],
      ['docs/agents.md', 'agent-protocol.md'],
      ['docs/demo.md', 'agent-protocol.md'],
      ['docs/formats/scenario.md', '../agent-protocol.md'],
      ['docs/formats/stategate.md', '../agent-protocol.md'],
      ['examples/python-agent/README.md', '../../docs/agent-protocol.md'],
      ['examples/mcp-agent-ts/README.md', '../../docs/agent-protocol.md'],
      ['examples/refund-agent/protocol.mjs', 'docs/agent-protocol.md'],
    ]) {
      expect(readFileSync(join(ROOT, file), 'utf8'), file).toContain(link);
    }
  });
});
