// Each kind of problem, at the exact file:line:col a person would go to, and all of them at once.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSuite } from '../../src/config/load.js';
import { durationMs } from '../../src/config/schema.js';
import { formatProblem, type Problem } from '../../src/config/suite.js';
import { makeSuite, tempRoot, VALID_ENV } from './helpers.js';

let root: Awaited<ReturnType<typeof tempRoot>>;
beforeAll(async () => {
  root = await tempRoot();
});
afterAll(async () => {
  await root.remove();
});

/** Loads the valid suite with `edits` applied; the problems, with files relative to the suite. */
async function problemsOf(edits: Record<string, string | null>, env = VALID_ENV): Promise<Problem[]> {
  const dir = await makeSuite(root.dir, edits);
  const result = await loadSuite(path.join(dir, 'stategate.yml'), { env });
  if (result.ok) return [];
  return result.problems.map((p) => ({ ...p, file: path.relative(dir, p.file) }));
}

const scenario = (body: string) => `id: extra\ninput:\n  message: hi\n${body}`;

describe('problem positions', () => {
  it('an enum value: the value, with what was expected and a suggestion', async () => {
    const twin = 'tools:\n  cancel_order:\n    risk: wirte\n    static: { ok: true }\n';
    expect(await problemsOf({ 'twins/extra.yaml': twin })).toEqual([
      {
        file: 'twins/extra.yaml',
        line: 3,
        col: 11,
        path: 'tools.cancel_order.risk',
        message: "expected one of read | write | write_irreversible, got 'wirte'; did you mean 'write'?",
      },
    ]);
  });

  it('an unknown key: the key itself, with the keys that are allowed there', async () => {
    const problems = await problemsOf({
      'scenarios/extra.yaml': scenario('faults:\n  - tool: send_email\n    fault: delay\n    delay: 5\n'),
    });
    expect(problems).toEqual([
      {
        file: 'scenarios/extra.yaml',
        line: 7,
        col: 5,
        path: 'faults[0].delay',
        message:
          "unknown key 'delay'; did you mean 'delay_ms'? (expected one of tool, when, fault, message, delay_ms, retry_after)",
      },
    ]);
  });

  it('a model fault: checked as one (its own keys and fault names), and its model must be one of models', async () => {
    const problems = await problemsOf({
      'scenarios/extra.yaml': scenario(
        'faults:\n  - model: openia\n    fault: rate_limited\n  - model: openia\n    fault: timeout_after_mutation\n',
      ),
    });
    // Every problem at once: both unknown model names and the tool fault used on a model.
    expect(problems.map((p) => [p.line, p.path, p.message])).toEqual([
      [5, 'faults[0].model', "unknown model 'openia' (stategate.yml declares no models)"],
      [7, 'faults[1].model', "unknown model 'openia' (stategate.yml declares no models)"],
      [
        8,
        'faults[1].fault',
        "expected one of rate_limited | server_error | unavailable | timeout | dropped_connection | malformed_json | delay, got 'timeout_after_mutation'; did you mean 'timeout'?",
      ],
    ]);
    const unknownModel = await problemsOf({
      'scenarios/extra.yaml': scenario('faults:\n  - model: openia\n    fault: rate_limited\n'),
    });
    expect(unknownModel).toEqual([
      {
        file: 'scenarios/extra.yaml',
        line: 5,
        col: 12,
        path: 'faults[0].model',
        message: "unknown model 'openia' (stategate.yml declares no models)",
      },
    ]);
  });

  it('a missing field: the mapping it is missing from', async () => {
    const problems = await problemsOf({ 'scenarios/extra.yaml': 'id: extra\ninput:\n  context: {}\n' });
    expect(problems).toEqual([
      {
        file: 'scenarios/extra.yaml',
        line: 3,
        col: 3,
        path: 'input.message',
        message: "missing required field 'message'",
      },
    ]);
  });

  it('an expectation with two kind keys, and one with none', async () => {
    const body =
      'expect:\n  - id: a\n    outcome: SUCCESS\n    reply_contains: done\n  - id: b\n    critical: true\n';
    expect(await problemsOf({ 'scenarios/extra.yaml': scenario(body) })).toEqual([
      {
        file: 'scenarios/extra.yaml',
        line: 7,
        col: 5,
        path: 'expect[0].reply_contains',
        message:
          "an expectation has exactly one kind key; this one has 'outcome' and 'reply_contains' (split it into one expectation per kind)",
      },
      {
        file: 'scenarios/extra.yaml',
        line: 8,
        col: 5,
        path: 'expect[1]',
        message: expect.stringMatching(
          /^an expectation needs exactly one kind key, one of: query, changes, .*, judge, turns, ended_by; this one has none$/,
        ),
      },
    ]);
  });

  it('the errors of an expectation are about its own kind', async () => {
    const body = 'expect:\n  - id: counted\n    tool_called: { tool: send_email, mn: 1, max: -1 }\n';
    expect(await problemsOf({ 'scenarios/extra.yaml': scenario(body) })).toEqual([
      {
        file: 'scenarios/extra.yaml',
        line: 6,
        col: 38,
        path: 'expect[0].tool_called.mn',
        message: "unknown key 'mn'; did you mean 'min'? (expected one of tool, min, max, args)",
      },
      {
        file: 'scenarios/extra.yaml',
        line: 6,
        col: 50,
        path: 'expect[0].tool_called.max',
        message: 'expected a number >= 0, got -1',
      },
    ]);
  });

  it('duplicate scenario ids name both files', async () => {
    const problems = await problemsOf({ 'scenarios/zz.yaml': 'id: refund-simple\ninput: { message: hi }\n' });
    expect(problems).toEqual([
      {
        file: 'scenarios/zz.yaml',
        line: 1,
        col: 5,
        path: 'id',
        message: expect.stringMatching(
          /^duplicate scenario id 'refund-simple': also the id of .*scenarios\/refunds\/simple\.yaml:1:5$/,
        ),
      },
    ]);
  });

  it('duplicate tool names across twin files name both files', async () => {
    const problems = await problemsOf({ 'twins/zz.yaml': 'tools:\n  send_email:\n    static: {}\n' });
    expect(problems).toEqual([
      {
        file: 'twins/zz.yaml',
        line: 2,
        col: 3,
        path: 'tools.send_email',
        message: expect.stringMatching(/^tool 'send_email' is also defined in .*twins\/payments\.yaml:23:3$/),
      },
    ]);
  });

  it('tools a scenario names must exist, and faults must be on allowed tools', async () => {
    const body =
      'tools: [lookup_order, send_mail]\nfaults:\n  - { tool: refund_payment, fault: server_error }\n  - { tool: nope, fault: delay }\n' +
      'expect:\n  - id: o\n    order: { before: refund_payment, must_call: [lookup_ordr] }\n';
    expect((await problemsOf({ 'scenarios/extra.yaml': scenario(body) })).map(formatProblem)).toEqual([
      "scenarios/extra.yaml:4:23: tools[1]: unknown tool 'send_mail'; did you mean 'send_email'?",
      "scenarios/extra.yaml:6:13: faults[0].tool: a fault on tool 'refund_payment', which this scenario's tools list does not allow (lookup_order, send_mail)",
      "scenarios/extra.yaml:7:13: faults[1].tool: unknown tool 'nope'",
      "scenarios/extra.yaml:10:50: expect[0].order.must_call[0]: unknown tool 'lookup_ordr'; did you mean 'lookup_order'?",
    ]);
  });

  it('a twin input that is not a valid JSON Schema points into the schema', async () => {
    const twin =
      'tools:\n  t:\n    input:\n      type: object\n      properties:\n        n: { type: integer, minimum: low }\n    static: 1\n';
    expect(await problemsOf({ 'twins/extra.yaml': twin })).toEqual([
      {
        file: 'twins/extra.yaml',
        line: 6,
        col: 38,
        path: 'tools.t.input.properties.n.minimum',
        message: 'invalid JSON Schema: must be number',
      },
    ]);
  });

  it('idempotency_key and :params must be arguments of the input schema', async () => {
    const twin =
      'tools:\n  t:\n    input: { type: object, properties: { id: { type: string } } }\n    idempotency_key: key\n' +
      '    sql: SELECT :id, :other::int\n';
    expect((await problemsOf({ 'twins/extra.yaml': twin })).map(formatProblem)).toEqual([
      "twins/extra.yaml:4:22: tools.t.idempotency_key: idempotency_key names 'key', which is not an argument in input.properties (the arguments are id)",
      'twins/extra.yaml:5:22: tools.t.sql: the parameter :other is not an argument in input.properties (the arguments are id)',
    ]);
  });

  it('YAML syntax errors carry their position', async () => {
    const problems = await problemsOf({
      'scenarios/extra.yaml': 'id: x\ninput:\n  message: "unterminated\n',
    });
    expect(problems).toEqual([
      { file: 'scenarios/extra.yaml', line: 4, col: 1, message: 'YAML: Missing closing "quote' },
    ]);
  });

  it('a missing config file, and a config path that is a directory', async () => {
    const missing = await loadSuite(path.join(root.dir, 'nowhere', 'stategate.yml'));
    expect(missing).toEqual({
      ok: false,
      problems: [
        { file: path.join(root.dir, 'nowhere', 'stategate.yml'), line: 1, col: 1, message: 'file not found' },
      ],
    });
    const dir = path.join(root.dir, 'a-directory.yml');
    await mkdir(dir);
    const result = await loadSuite(dir);
    expect(result).toEqual({
      ok: false,
      problems: [{ file: dir, line: 1, col: 1, message: 'not a regular file' }],
    });
  });
});

describe('durations', () => {
  const config = (timeout: string) =>
    `version: 1\nagent:\n  command: node agent.mjs\n  timeout: ${timeout}\ndatabase:\n  engine: postgres\n  schema: [db/schema.sql]\n  fixtures: [db/fixtures.yaml, db/extra.sql]\njudge:\n  url: http://127.0.0.1:9/v1\n  model: small\n`;

  it('a bare number under 1000 is refused with what it would mean and the fix', async () => {
    const problems = await problemsOf({ 'stategate.yml': config('30') });
    expect(problems.map(formatProblem)).toEqual([
      'stategate.yml:4:12: agent.timeout: 30 is 30 ms; did you mean 30s? A bare number is milliseconds and must be at least 1000: write 30s, or 30ms if you mean milliseconds',
    ]);
  });

  it('a unit, or a bare number of at least 1000 (milliseconds), is accepted as before', async () => {
    for (const [written, ms] of [
      ['30s', 30_000],
      ['30ms', 30],
      ['2m', 120_000],
      ['1000', 1000],
      ['45000', 45_000],
    ] as const) {
      const dir = await makeSuite(root.dir, { 'stategate.yml': config(written) });
      const result = await loadSuite(path.join(dir, 'stategate.yml'), { env: VALID_ENV });
      expect(result.ok, written).toBe(true);
      if (result.ok) expect(durationMs(result.suite.config.agent.timeout), written).toBe(ms);
    }
  });

  it('zero and negative numbers are refused without suggesting seconds', async () => {
    const problems = await problemsOf({ 'stategate.yml': config('0') });
    expect(problems.map((p) => p.message)).toEqual(['expected a positive duration such as 30s, got 0']);
  });
});

describe('the parts that load, beside the problems', () => {
  const config = (engine: string, timeout = '30s') =>
    `version: 1\nagent:\n  command: node agent.mjs\n  timeout: ${timeout}\ndatabase:\n  engine: ${engine}\n  schema: [db/schema.sql]\n  fixtures: [db/fixtures.yaml, db/extra.sql]\njudge:\n  url: http://127.0.0.1:9/v1\n  model: small\n`;
  const load = async (edits: Record<string, string>) => {
    const dir = await makeSuite(root.dir, edits);
    return loadSuite(path.join(dir, 'stategate.yml'), { env: VALID_ENV });
  };

  it('keep the scenarios and tools of the files that loaded, so their SQL can be prepared', async () => {
    const result = await load({
      'stategate.yml': config('postgres', '30'),
      'scenarios/refunds/simple.yaml': 'id: simple\ninput: { message: hi }\nexpect: not-a-list\n',
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.parts?.scenarios.map((s) => s.id)).toEqual(['refund-timeout-after-mutation']);
    expect(result.parts?.tools.size).toBeGreaterThan(0);
    expect(result.parts?.config.database.engine).toBe('postgres');
  });

  it('are none when the database section itself is broken', async () => {
    const result = await load({ 'stategate.yml': config('mysql') });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.parts).toBeUndefined();
  });
});

describe('all problems at once', () => {
  it('reports every problem in every broken file in one result, sorted by file and position', async () => {
    const config =
      'version: 1\nagent:\n  command: node a.mjs\n  timeout: forever\ndatabase:\n  engine: postgres\n  url: ${NO_SUCH_URL}\n' +
      '  schema: [db/schema.sql, db/missing.sql]\n  fixtures: [db/fixtures.yaml]\njudge: { url: "http://x", model: m }\n';
    const problems = await problemsOf({
      'stategate.yml': config,
      'db/fixtures.yaml': 'customers: { id: 1 }\n',
      'twins/broken.yaml':
        'tools:\n  a:\n    sql: SELECT 1\n    static: 2\n  b:\n    returns: all\n    static: 1\n',
      'twins/garbage.yaml': 'tools: [\n',
      'scenarios/one.yaml': 'id: One\ninput: { message: 1 }\n',
      'scenarios/two.yaml':
        'id: two\ninput: { message: hi }\nexpect:\n  - { id: x, max_retries: -1 }\n  - { id: x, reply_matches: "(" }\n',
    });
    const root = (p: Problem) => `${p.file}:${p.line}:${p.col}`;
    expect(problems.map(root)).toEqual([
      'db/fixtures.yaml:1:12',
      'scenarios/one.yaml:1:5',
      'scenarios/one.yaml:2:19',
      'scenarios/two.yaml:4:27',
      'scenarios/two.yaml:5:11',
      'scenarios/two.yaml:5:29',
      'stategate.yml:4:12',
      'stategate.yml:7:8',
      'stategate.yml:8:27',
      'twins/broken.yaml:3:5',
      'twins/broken.yaml:6:14',
      'twins/garbage.yaml:2:1',
    ]);
    expect(problems.map((p) => p.message)).toEqual([
      'expected a list, got a mapping',
      "expected lowercase letters, digits and dashes, starting with a letter or digit, got 'One'",
      'expected a string, got 1',
      'expected a number >= 0, got -1',
      "duplicate expectation id 'x' (first used at line 4)",
      expect.stringContaining('not a valid regular expression'),
      "expected a duration such as 500ms, 60s or 2m, got 'forever'",
      'the environment variable NO_SUCH_URL is not set',
      expect.stringMatching(/^file not found: .*db\/missing\.sql$/),
      'a tool has exactly one of sql or static',
      "expected one of one | many | none, got 'all'",
      expect.stringContaining('YAML:'),
    ]);
  });
});
