// collectSqlStatements: every SQL text of a suite, at its position, converted to `$n` form, and each
// one prepares against a real Postgres built from the suite's own schema.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectSqlStatements, loadSuite, type SqlStatement } from '../../src/config/load.js';
import type { Suite } from '../../src/config/suite.js';
import { makeSuite, tempRoot, VALID_DIR, VALID_ENV } from './helpers.js';

const DATABASE_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let suite: Suite;
let statements: SqlStatement[];
let root: Awaited<ReturnType<typeof tempRoot>>;
beforeAll(async () => {
  root = await tempRoot();
  const result = await loadSuite(path.join(VALID_DIR, 'stategate.yml'), { env: VALID_ENV });
  if (!result.ok) throw new Error('the valid suite did not load');
  suite = result.suite;
  statements = collectSqlStatements(suite);
});
afterAll(async () => {
  await root.remove();
});

/** 1-based line and column where `needle` first appears in a file of the valid suite. */
function positionOf(rel: string, needle: string): { line: number; col: number } {
  const lines = readFileSync(path.join(VALID_DIR, rel), 'utf8').split('\n');
  const line = lines.findIndex((l) => l.includes(needle));
  return { line: line + 1, col: lines[line].indexOf(needle) + 1 };
}

const find = (what: string) => {
  const s = statements.find((st) => st.what === what);
  if (!s) throw new Error(`no statement "${what}" in ${statements.map((st) => st.what).join(', ')}`);
  return s;
};

describe('collectSqlStatements', () => {
  it('lists every statement of tools, preconditions, state and expectation queries', () => {
    expect(statements.map((s) => s.what)).toEqual([
      'tool lookup_order',
      'tool refund_payment, statement 1',
      'tool refund_payment, statement 2',
      'tool refund_payment, precondition 1',
      'tool send_email',
      'scenario refund-simple, state.sql[0]',
      'scenario refund-simple, state.sql[1], statement 1',
      'scenario refund-simple, state.sql[1], statement 2',
      'expectation amount-range, query',
      'expectation status-pattern, query',
      'scenario refund-timeout-after-mutation, state.sql',
      'expectation refunded-exactly-once, query',
      'expectation success-backed-by-state, outcome_verified.query',
    ]);
  });

  it('converts :name parameters to $n, leaving casts alone', () => {
    expect(find('tool refund_payment, statement 2')).toMatchObject({
      sql: 'INSERT INTO refunds (order_id, amount) VALUES ($1, $2::numeric) RETURNING id AS refund_id, amount',
      paramCount: 2,
    });
    expect(find('tool refund_payment, precondition 1')).toMatchObject({
      sql: 'SELECT refundable_amount >= $1 FROM orders WHERE id = $2',
      paramCount: 2,
    });
    expect(find('expectation refunded-exactly-once, query').paramCount).toBe(0);
  });

  it('points at the line and column where each statement starts', () => {
    const payments = 'twins/payments.yaml';
    const simple = 'scenarios/refunds/simple.yaml';
    const timeout = 'scenarios/refunds/timeout.yaml';
    const at = (s: SqlStatement) => ({ file: path.basename(s.file), line: s.line, col: s.col });
    expect(at(find('tool refund_payment, statement 1'))).toEqual({
      file: 'payments.yaml',
      ...positionOf(payments, 'UPDATE orders SET refunded_amount'),
    });
    expect(at(find('tool refund_payment, statement 2'))).toEqual({
      file: 'payments.yaml',
      ...positionOf(payments, 'INSERT INTO refunds'),
    });
    expect(at(find('tool refund_payment, precondition 1'))).toEqual({
      file: 'payments.yaml',
      ...positionOf(payments, 'SELECT refundable_amount >='),
    });
    expect(at(find('scenario refund-simple, state.sql[1], statement 2'))).toEqual({
      file: 'simple.yaml',
      ...positionOf(simple, 'DELETE FROM refunds'),
    });
    expect(at(find('expectation success-backed-by-state, outcome_verified.query'))).toEqual({
      file: 'timeout.yaml',
      ...positionOf(timeout, "SELECT refund_count FROM orders WHERE id = 'ORD-1001'\", equals"),
    });
  });
});

describe('the statements against a real Postgres', () => {
  const schema = `stategate_cfgtest_${randomBytes(6).toString('hex')}`;
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    await client.query(`CREATE SCHEMA ${client.escapeIdentifier(schema)}`);
    await client.query(`SET search_path TO ${client.escapeIdentifier(schema)}`);
    for (const s of suite.template.schema) await client.query(s.sql);
  });
  afterAll(async () => {
    await client.query('DEALLOCATE ALL');
    await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`);
    await client.end();
  });

  /** Prepares without running; the error message, or null and the parameter count Postgres sees. */
  async function prepare(sql: string, name: string): Promise<{ error: string | null; params?: number }> {
    try {
      await client.query(`PREPARE ${client.escapeIdentifier(name)} AS ${sql}`);
    } catch (err) {
      return { error: (err as Error).message };
    }
    const r = await client.query(
      'SELECT cardinality(parameter_types) AS n FROM pg_prepared_statements WHERE name = $1',
      [name],
    );
    return { error: null, params: Number(r.rows[0].n) };
  }

  it('every statement of the valid suite prepares, with the parameter count it declares', async () => {
    for (const [i, s] of statements.entries()) {
      const result = await prepare(s.sql, `valid_${i}`);
      expect(result, s.what).toEqual({ error: null, params: s.paramCount });
    }
  });

  it('a wrong column fails to prepare, and the statement says where it is written', async () => {
    const twin = readFileSync(path.join(VALID_DIR, 'twins/payments.yaml'), 'utf8').replace(
      'INSERT INTO refunds (order_id, amount)',
      'INSERT INTO refunds (order_id, amont)',
    );
    const dir = await makeSuite(root.dir, { 'twins/payments.yaml': twin });
    const result = await loadSuite(path.join(dir, 'stategate.yml'), { env: VALID_ENV });
    if (!result.ok) throw new Error('the edited suite did not load');
    const failures: string[] = [];
    for (const [i, s] of collectSqlStatements(result.suite).entries()) {
      const { error } = await prepare(s.sql, `edited_${i}`);
      if (error) failures.push(`${path.relative(dir, s.file)}:${s.line}:${s.col}: ${s.what}: ${error}`);
    }
    const { line, col } = positionOf('twins/payments.yaml', 'INSERT INTO refunds');
    expect(failures).toEqual([
      `twins/payments.yaml:${line}:${col}: tool refund_payment, statement 2: column "amont" of relation "refunds" does not exist`,
    ]);
  });
});
