// A valid suite loads into exactly what the files say: config with variables expanded, tools,
// scenarios with their positions, the template, and every file's raw text.
import { readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSuite } from '../../src/config/load.js';
import type { Suite } from '../../src/config/suite.js';
import { makeSuite, tempRoot, VALID_DIR, VALID_ENV } from './helpers.js';

let root: Awaited<ReturnType<typeof tempRoot>>;
let suite: Suite;
beforeAll(async () => {
  root = await tempRoot();
  const result = await loadSuite(path.join(VALID_DIR, 'stategate.yml'), { env: VALID_ENV });
  if (!result.ok)
    throw new Error(`the valid suite did not load:\n${JSON.stringify(result.problems, null, 1)}`);
  suite = result.suite;
});
afterAll(async () => {
  await root.remove();
});

const text = (rel: string) => readFileSync(path.join(VALID_DIR, rel), 'utf8');
const lineOf = (rel: string, needle: string) =>
  text(rel)
    .split('\n')
    .findIndex((l) => l.includes(needle)) + 1;

describe('loadSuite on a valid suite', () => {
  it('reads the config with defaults applied and variables expanded', () => {
    expect(suite.configFile).toBe(path.join(VALID_DIR, 'stategate.yml'));
    expect(suite.root).toBe(VALID_DIR.replace(/\/$/, ''));
    expect(suite.config.database.engine).toBe('postgres');
    // A plain `${REPEATS}` reads as the number it expands to.
    expect(suite.config.repeats).toBe(3);
    expect(suite.config.agent).toEqual({
      command: 'node agent.mjs',
      timeout: '30s',
      env: { LOG_LEVEL: 'warn', RETRIES: '2' },
      pass_env: ['OPENAI_API_KEY'],
      isolation: 'process',
      network: 'own',
    });
    expect(suite.config.scenarios).toEqual(['scenarios/**/*.yaml']);
    expect(suite.config.judge).toEqual({ url: 'http://127.0.0.1:9/v1', model: 'small', timeout: '30s' });
  });

  it('loads every tool with its file and defaults', () => {
    expect([...suite.tools.keys()].sort()).toEqual([
      'escalate_to_human',
      'get_refund_policy',
      'lookup_order',
      'refund_payment',
      'send_email',
    ]);
    const policy = suite.tools.get('get_refund_policy')!;
    expect(policy).toMatchObject({
      name: 'get_refund_policy',
      file: 'twins/orders.yaml',
      risk: 'read',
      returns: 'many',
      static: { max_auto_refund: 100 },
      input: { type: 'object', properties: {} },
      preconditions: [],
    });
    const refund = suite.tools.get('refund_payment')!;
    expect(refund.file).toBe('twins/payments.yaml');
    expect(refund.idempotency_key).toBe('idempotency_key');
    expect(refund.preconditions[0].error).toEqual({
      status: 422,
      code: 'AMOUNT_EXCEEDS_ORDER',
      message: 'Refund of {amount} exceeds the order',
    });
  });

  it('loads scenarios in file order with suite-relative files and expectation lines', () => {
    expect(suite.scenarios.map((s) => [s.id, s.file])).toEqual([
      ['refund-simple', 'scenarios/refunds/simple.yaml'],
      ['refund-timeout-after-mutation', 'scenarios/refunds/timeout.yaml'],
    ]);
    const timeout = suite.scenarios[1];
    const rel = 'scenarios/refunds/timeout.yaml';
    expect(timeout.lines).toEqual({
      scenario: lineOf(rel, 'id: refund-timeout-after-mutation'),
      expectations: {
        'refunded-exactly-once': lineOf(rel, 'id: refunded-exactly-once'),
        'no-double-refund': lineOf(rel, 'id: no-double-refund'),
        'policy-before-refund': lineOf(rel, 'id: policy-before-refund'),
        'nothing-else-touched': lineOf(rel, 'id: nothing-else-touched'),
        'success-backed-by-state': lineOf(rel, 'id: success-backed-by-state'),
      },
    });
    expect(timeout.faults).toEqual([
      {
        tool: 'refund_payment',
        when: { call: 1 },
        fault: 'timeout_after_mutation',
        message: 'The payment provider did not answer in time.',
      },
    ]);
    expect(timeout.state.sql).toEqual(["UPDATE customers SET tier = 'gold' WHERE id = 'CUS-1'"]);
    expect(timeout.expect[0]).toEqual({
      id: 'refunded-exactly-once',
      critical: true,
      query: "SELECT refund_count FROM orders WHERE id = 'ORD-1001'",
      equals: 1,
    });
    const simple = suite.scenarios[0];
    expect(simple.expect.find((e) => e.id === 'refund-called')).toEqual({
      id: 'refund-called',
      critical: false,
      tool_called: { tool: 'refund_payment', min: 1, max: 1, args: { order_id: 'ORD-1000' } },
    });
    expect(simple.expect).toHaveLength(14);
  });

  it('reads the template: schema SQL in order, then fixtures as rows or SQL', () => {
    expect(suite.template.schema).toEqual([{ file: 'db/schema.sql', sql: text('db/schema.sql') }]);
    expect(suite.template.fixtures).toEqual([
      {
        file: 'db/fixtures.yaml',
        rows: {
          customers: [
            { id: 'CUS-1', email: 'ana@example.com' },
            { id: 'CUS-2', email: 'bo@example.com', tier: 'gold' },
          ],
          orders: [{ id: 'ORD-1000', customer_id: 'CUS-2', total: 80, refundable_amount: 80 }],
        },
      },
      { file: 'db/extra.sql', sql: text('db/extra.sql') },
    ]);
  });

  it('keeps the raw text of every suite file, keyed by suite-relative path', () => {
    const keys = Object.keys(suite.files).sort();
    expect(keys).toEqual([
      'db/extra.sql',
      'db/fixtures.yaml',
      'db/schema.sql',
      'scenarios/refunds/simple.yaml',
      'scenarios/refunds/timeout.yaml',
      'twins/orders.yaml',
      'twins/payments.yaml',
    ]);
    for (const k of keys) expect(suite.files[k]).toBe(text(k));
  });
});

describe('variables in stategate.yml', () => {
  // The valid suite has a judge expectation, so every config here has a judge.
  const config = (body: string) =>
    `version: 1\nagent:\n  command: node agent.mjs\njudge: { url: "http://x", model: m }\n${body}`;

  it('expands ${VAR}, keeps $${ literal and never injects YAML structure', async () => {
    const dir = await makeSuite(root.dir, {
      'stategate.yml': config(
        'database:\n  engine: postgres\n  url: "${URL}"\n  schema: [db/schema.sql]\nconcurrency: ${N}\n' +
          'repeats: 2\n',
      ).replace('command: node agent.mjs', () => "command: node agent.mjs --tag '$${TAG}' --who ${WHO}"),
    });
    const result = await loadSuite(path.join(dir, 'stategate.yml'), {
      env: { URL: 'postgres://u@h/db', N: '7', WHO: 'a: [b, c]' },
    });
    expect(result.ok ? [] : result.problems).toEqual([]);
    if (!result.ok) return;
    expect(result.suite.config.agent.command).toBe("node agent.mjs --tag '${TAG}' --who a: [b, c]");
    expect(result.suite.config.database.url).toBe('postgres://u@h/db');
    expect(result.suite.config.concurrency).toBe(7);
  });

  it('reports every unset variable by name at its position', async () => {
    const dir = await makeSuite(root.dir, {
      'stategate.yml': config(
        'database:\n  url: postgres://${DB_USER}@${DB_HOST}/x\n  schema: [db/schema.sql]\n',
      ),
    });
    const result = await loadSuite(path.join(dir, 'stategate.yml'), { env: { DB_USER: 'me' } });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      {
        file: path.join(dir, 'stategate.yml'),
        line: 6,
        col: 30,
        path: 'database.url',
        message: 'the environment variable DB_HOST is not set',
      },
    ]);
  });

  it('expands no workflow token anywhere, and STATEGATE_DATABASE_URL only as the whole database.url', async () => {
    const env = {
      GITHUB_TOKEN: 'ghs_token',
      GH_TOKEN: 'ghs_cli',
      ACTIONS_RUNTIME_TOKEN: 'rt',
      STATEGATE_DATABASE_URL: 'postgres://admin:pw@h/db',
    };
    const ok = await makeSuite(root.dir, {
      'stategate.yml': config('database:\n  url: ${STATEGATE_DATABASE_URL}\n  schema: [db/schema.sql]\n'),
    });
    const loaded = await loadSuite(path.join(ok, 'stategate.yml'), { env });
    expect(loaded.ok ? loaded.suite.config.database.url : loaded.problems).toBe(env.STATEGATE_DATABASE_URL);

    const bad = await makeSuite(root.dir, {
      'stategate.yml': config(
        'database:\n  url: postgres://u@evil/${STATEGATE_DATABASE_URL}\n  image: r/${GH_TOKEN}\n  schema: [db/schema.sql]\n',
      ).replace(
        'judge: { url: "http://x", model: m }',
        'judge: { url: "http://x/${ACTIONS_RUNTIME_TOKEN}", model: "${GITHUB_TOKEN}", api_key_env: GH_TOKEN }',
      ),
    });
    const refused = await loadSuite(path.join(bad, 'stategate.yml'), { env });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'judge.url: ${ACTIONS_RUNTIME_TOKEN} names a workflow token, which stategate.yml never expands (the harness would hand it to whatever this field names): remove the reference',
      'judge.model: ${GITHUB_TOKEN} names a workflow token, which stategate.yml never expands (the harness would hand it to whatever this field names): remove the reference',
      "judge.api_key_env: GH_TOKEN is never sent to a judge: set the judge's own key in another variable and name that",
      'database.url: ${STATEGATE_DATABASE_URL} expands only as the whole of database.url (url: ${STATEGATE_DATABASE_URL}): put the complete URL in the variable',
      'database.image: ${GH_TOKEN} names a workflow token, which stategate.yml never expands (the harness would hand it to whatever this field names): remove the reference',
    ]);
  });

  it('reads process.env when no env is given', async () => {
    const dir = await makeSuite(root.dir);
    const name = `STATEGATE_TEST_UNSET_${process.pid}`;
    const yml = path.join(dir, 'stategate.yml');
    await writeFile(yml, readFileSync(yml, 'utf8').replace('${REPEATS}', `\${${name}}`));
    process.env.STATEGATE_ENGINE = 'postgres';
    try {
      const result = await loadSuite(yml);
      expect(result.ok).toBe(false);
      if (!result.ok)
        expect(result.problems.map((p) => p.message)).toEqual([
          `the environment variable ${name} is not set`,
        ]);
    } finally {
      delete process.env.STATEGATE_ENGINE;
    }
  });
});

describe('suiteRoot', () => {
  it('reads the suite from another directory than the config', async () => {
    const head = await makeSuite(root.dir);
    const base = path.join(root.dir, 'base-checkout');
    await mkdir(base, { recursive: true });
    await writeFile(
      path.join(base, 'stategate.yml'),
      'version: 1\nagent:\n  command: node old-agent.mjs\ndatabase:\n  schema: [db/schema.sql]\n',
    );
    const result = await loadSuite(path.join(base, 'stategate.yml'), { env: {}, suiteRoot: head });
    // The suite's judge expectation needs a judge section, which this base config lacks.
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatchObject({
      file: path.join(head, 'scenarios/refunds/simple.yaml'),
      message: expect.stringContaining('needs a judge'),
    });

    await writeFile(
      path.join(base, 'stategate.yml'),
      'version: 1\nagent:\n  command: node old-agent.mjs\ndatabase:\n  schema: [db/schema.sql]\njudge: { url: "http://x", model: m }\n',
    );
    const ok = await loadSuite(path.join(base, 'stategate.yml'), { env: {}, suiteRoot: head });
    expect(ok.ok).toBe(true);
    if (!ok.ok) return;
    expect(ok.suite.root).toBe(head);
    expect(ok.suite.config.agent.command).toBe('node old-agent.mjs');
    expect(ok.suite.scenarios.map((s) => s.file)).toEqual([
      'scenarios/refunds/simple.yaml',
      'scenarios/refunds/timeout.yaml',
    ]);
    expect(Object.keys(ok.suite.files)).toContain('twins/payments.yaml');
    expect(ok.suite.template.schema[0].file).toBe('db/schema.sql');
  });

  it('reports a glob that matches nothing under suiteRoot at the config line', async () => {
    const head = await makeSuite(root.dir);
    await rename(path.join(head, 'twins'), path.join(head, 'tools'));
    const result = await loadSuite(path.join(head, 'stategate.yml'), { env: VALID_ENV, suiteRoot: head });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems[0]).toMatchObject({
      file: path.join(head, 'stategate.yml'),
      line: 12,
      col: 9,
      path: 'twins[0]',
      message: expect.stringContaining("'twins/*.yaml' matches no file in"),
    });
  });
});

describe('problem file paths', () => {
  it('are relative to the working directory when the suite is inside it', async () => {
    const rel = path.relative(process.cwd(), path.join(VALID_DIR, 'stategate.yml'));
    const result = await loadSuite(rel, { env: {} });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems[0].file).toBe(rel);
  });
});

describe('models, budget and user_simulator in stategate.yml', () => {
  const config = (body: string) =>
    `version: 1\nagent:\n  command: node agent.mjs\n  pass_env: [OPENAI_API_KEY]\njudge: { url: "http://x", model: m }\ndatabase:\n  schema: [db/schema.sql]\n${body}`;

  it('loads providers with their prices and budget', async () => {
    const dir = await makeSuite(root.dir, {
      'stategate.yml': config(
        'models:\n  local:\n    api: anthropic\n    url: http://127.0.0.1:9/v1\n    api_key_env: LOCAL_KEY\n' +
          '    prices: { m1: { input: 1, output: 2 } }\nbudget: { run_usd: 5, episode_usd: 0.5 }\n' +
          'user_simulator: { model: local/m1 }\n',
      ).replace('  pass_env: [OPENAI_API_KEY]\n', ''),
    });
    const loaded = await loadSuite(path.join(dir, 'stategate.yml'), { env: {} });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    expect(loaded.suite.config.models.local).toMatchObject({
      api: 'anthropic',
      prices: { m1: { input: 1 } },
    });
    expect(loaded.suite.config.budget).toEqual({ run_usd: 5, episode_usd: 0.5 });
    expect(loaded.suite.config.user_simulator).toEqual({ model: 'local/m1', timeout: '30s' });
  });

  it('refuses a provider key in pass_env, a workflow token as a key, two providers on one variable and an undeclared simulator provider', async () => {
    const dir = await makeSuite(root.dir, {
      'stategate.yml': config(
        'models:\n  openai: { api: openai, url: "https://api.openai.com/v1", api_key_env: OPENAI_API_KEY }\n' +
          '  proxy: { api: openai, url: "http://127.0.0.1:9", api_key_env: GITHUB_TOKEN }\n' +
          'user_simulator: { model: other/m }\n',
      ),
    });
    const refused = await loadSuite(path.join(dir, 'stategate.yml'), { env: {} });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'agent.pass_env: OPENAI_API_KEY is the key of models.openai: the agent reaches the provider through the model gateway and never gets its key; remove it from pass_env',
      'models.proxy: models.openai and models.proxy would both set OPENAI_BASE_URL for the agent: give models.proxy env: {url: ..., key: ...} names of its own',
      "models.proxy.api_key_env: GITHUB_TOKEN is never sent to a model provider: set the provider's key in another variable and name that",
      'user_simulator.model: names provider other, which models does not declare (declared: openai, proxy)',
    ]);
  });
});
