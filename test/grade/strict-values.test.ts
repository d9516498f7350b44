// Values compare by their column's type, read from a real database: every way a wrong value used to
// pass by looking like the expected one now fails its expectation, `loose: true` brings the older
// reading back, and a mismatch shows both sides in one form, cut around where they differ.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Comparators } from '../../src/expectations/query-check.js';
import { gradeQueryCheck } from '../../src/expectations/query-check.js';
import type { QueryResult } from '../../src/model/episode.js';
import type { Engine, Sandbox } from '../../src/sandbox/types.js';
import { engines } from '../helpers/engines.js';

const SCHEMA = `
CREATE TABLE v (
  id integer PRIMARY KEY,
  doc jsonb,
  label text,
  amount numeric(10,2),
  big bigint,
  ratio double precision,
  flag boolean,
  at timestamptz,
  at_text text,
  tags text[]
);
`;

const FIXTURES = `
INSERT INTO v (id, doc, label, amount, big, ratio, flag, at, at_text, tags) VALUES
  (1, '{"n": "9", "ids": ["1"], "ok": "true"}', '1e2', 150.00, 9007199254740993, 0.5, true,
   '2024-05-01 10:00:00+02', '2024-05-01T10:00:00+02:00', '{a,b}'),
  (2, '{"n": 9, "ids": [1], "ok": true}', 't', 11.05, 1, 2, false, NULL, 'true', '{}');
`;

// One engine is enough here: the types come from the server, the grading is pure.
const [postgres] = engines();
let engine: Engine;
let sandbox: Sandbox;

beforeAll(async () => {
  engine = await postgres.create();
  const template = await engine.buildTemplate({
    schema: [{ file: 'db/schema.sql', sql: SCHEMA }],
    fixtures: [{ file: 'db/fixtures.sql', sql: FIXTURES }],
  });
  sandbox = await template.clone('strict-values');
}, 300_000);
afterAll(async () => {
  await sandbox?.dispose();
  await engine?.close();
}, 300_000);

/** Runs the query the way the harness does after an episode: read-only, with the column types. */
async function run(sql: string): Promise<QueryResult> {
  const { rows, fields } = await sandbox.readOnly(sql);
  return { sql, rows, fields };
}

async function grade(sql: string, check: Comparators) {
  const result = await run(sql);
  return {
    strict: gradeQueryCheck(check, result, 'e1'),
    loose: gradeQueryCheck({ ...check, loose: true }, result, 'e1'),
  };
}

describe('strict values: each old loophole now fails, and loose restores it', () => {
  it('inside JSON a string is not a number: "9" is not 9', async () => {
    const g = await grade("SELECT doc->'n' AS n FROM v WHERE id = 1", { equals: 9 });
    expect(g.strict).toMatchObject({ verdict: 'fail', label: 'STATE_MISMATCH' });
    expect(g.strict.message).toBe('v[1].n: expected 9, got "9"');
    expect(g.loose.verdict).toBe('pass');
    // Nor the other way round: the expected string "9" is not the JSON number 9.
    const reversed = await grade("SELECT doc->'n' AS n FROM v WHERE id = 2", { equals: '9' });
    expect(reversed.strict.verdict).toBe('fail');
    expect(reversed.loose.verdict).toBe('pass');
    // The document as a whole, written as YAML or as JSON text.
    const whole = await grade('SELECT doc FROM v WHERE id = 1', { equals: { n: 9, ids: ['1'], ok: 'true' } });
    expect(whole.strict.verdict).toBe('fail');
    expect(whole.loose.verdict).toBe('pass');
    const right = await grade('SELECT doc FROM v WHERE id = 2', {
      equals: '{"ok": true, "ids": [1], "n": 9.0}',
    });
    expect(right.strict.verdict).toBe('pass');
  });

  it('inside JSON ["1"] is not [1]', async () => {
    const g = await grade("SELECT doc->'ids' AS ids FROM v WHERE id = 1", { equals: [1] });
    expect(g.strict.verdict).toBe('fail');
    expect(g.strict.message).toBe('v[1].ids: expected [1], got ["1"]');
    expect(g.loose.verdict).toBe('pass');
  });

  it('inside JSON a boolean is not a string: "true" is not true', async () => {
    const g = await grade("SELECT doc->'ok' AS ok FROM v WHERE id = 1", { equals: true });
    expect(g.strict.verdict).toBe('fail');
    expect(g.loose.verdict).toBe('pass');
  });

  it("a text column compares as text: 't' is not true, 'true' is", async () => {
    const t = await grade('SELECT label FROM v WHERE id = 2', { equals: true });
    expect(t.strict.verdict).toBe('fail');
    expect(t.strict.message).toBe('v[2].label: expected "true", got "t"');
    expect(t.loose.verdict).toBe('pass');
    expect((await grade('SELECT at_text FROM v WHERE id = 2', { equals: true })).strict.verdict).toBe('pass');
    // A boolean column reads booleans, whatever form the expectation writes them in.
    expect((await grade('SELECT flag FROM v WHERE id = 1', { equals: true })).strict.verdict).toBe('pass');
    expect((await grade('SELECT flag FROM v WHERE id = 2', { equals: true })).strict.verdict).toBe('fail');
  });

  it("text '1e2' is not 100", async () => {
    const g = await grade('SELECT label FROM v WHERE id = 1', { equals: 100 });
    expect(g.strict.verdict).toBe('fail');
    expect(g.strict.message).toBe('v[1].label: expected "100", got "1e2"');
    expect(g.loose.verdict).toBe('pass');
    const inList = await grade('SELECT label FROM v WHERE id = 1', { in: [100, 200] });
    expect(inList.strict.verdict).toBe('fail');
    expect(inList.loose.verdict).toBe('pass');
  });

  it('a timestamp in a text column compares as text; in a timestamptz column as an instant', async () => {
    const utc = '2024-05-01T08:00:00Z';
    const text = await grade('SELECT at_text FROM v WHERE id = 1', { equals: utc });
    expect(text.strict.verdict).toBe('fail');
    expect(text.strict.message).toBe(
      'v[1].at_text: expected "2024-05-01T08:00:00Z", got "2024-05-01T10:00:00+02:00"',
    );
    expect(text.loose.verdict).toBe('pass');
    const instant = await grade('SELECT at FROM v WHERE id = 1', { equals: '2024-05-01 12:00:00+04' });
    expect(instant.strict.verdict).toBe('pass');
    expect(
      (await grade('SELECT at FROM v WHERE id = 1', { gt: '2024-05-01T07:59:59Z' })).strict.verdict,
    ).toBe('pass');
    // Ordering text is not ordering numbers or instants: an error, not a silent pass.
    const ordered = await grade('SELECT at_text FROM v WHERE id = 1', { gt: '2024-01-01' });
    expect(ordered.strict.verdict).toBe('error');
    expect(ordered.strict.message).toMatch(
      /gt compares numbers or timestamps, but the column is of type text/,
    );
    expect(ordered.loose.verdict).toBe('pass');
  });

  it('numbers compare by value across numeric types, exactly', async () => {
    expect((await grade('SELECT amount FROM v WHERE id = 1', { equals: 150 })).strict.verdict).toBe('pass');
    expect(
      (await grade('SELECT amount::int AS a FROM v WHERE id = 1', { equals: '150.00' })).strict.verdict,
    ).toBe('pass');
    expect((await grade('SELECT ratio FROM v WHERE id = 1', { equals: 0.5 })).strict.verdict).toBe('pass');
    expect(
      (await grade('SELECT big FROM v WHERE id = 1', { equals: '9007199254740993' })).strict.verdict,
    ).toBe('pass');
    expect(
      (await grade('SELECT big FROM v WHERE id = 1', { equals: '9007199254740992' })).strict.verdict,
    ).toBe('fail');
    expect((await grade('SELECT amount FROM v WHERE id = 2', { gte: 11.05, lt: 11.06 })).strict.verdict).toBe(
      'pass',
    );
  });

  it('a JSON number past double precision is not compared as its rounded double', async () => {
    // The driver reads JSON numbers as doubles: ...993 in the document arrives as ...992.
    const doc = `SELECT '{"n": 9007199254740993}'::jsonb AS doc`;
    const asYaml = await grade(doc, { equals: { n: 9007199254740992 } });
    expect(asYaml.strict).toMatchObject({ verdict: 'error' });
    expect(asYaml.strict.message).toContain("(doc->>'n')::numeric");
    expect((await grade(doc, { equals: '{"n": 9007199254740992}' })).strict.verdict).toBe('error');
    expect(
      (await grade(`${doc.replace(' AS doc', "->'n' AS n")}`, { equals: 9007199254740992 })).strict.verdict,
    ).toBe('error');
    // The expected JSON text is read exactly too: 0.30000000000000001 is not the 0.3 it rounds to.
    const third = await grade(`SELECT '{"x": 0.3}'::jsonb AS doc`, { equals: '{"x": 0.30000000000000001}' });
    expect(third.strict.verdict).toBe('error');
    // What the message advises compares the exact decimal.
    const exact = `SELECT ('{"n": 9007199254740993}'::jsonb->>'n')::numeric AS n`;
    expect((await grade(exact, { equals: '9007199254740993' })).strict.verdict).toBe('pass');
    expect((await grade(exact, { equals: '9007199254740992' })).strict.verdict).toBe('fail');
    // Numbers a double holds exactly compare as before.
    expect(
      (await grade(`SELECT '{"n": 9007199254740991}'::jsonb AS doc`, { equals: { n: 9007199254740991 } }))
        .strict.verdict,
    ).toBe('pass');
  });

  it('a text column reads an expected number by its shortest text, so text that looks like a number is quoted', async () => {
    expect((await grade(`SELECT '1.5'::text AS v`, { equals: 1.5 })).strict.verdict).toBe('pass');
    // YAML reads 1.50 as 1.5: the text '1.50' needs the quoted form, and '1.5' does not pass it.
    expect((await grade(`SELECT '1.50'::text AS v`, { equals: 1.5 })).strict.verdict).toBe('fail');
    expect((await grade(`SELECT '1.50'::text AS v`, { equals: '1.50' })).strict.verdict).toBe('pass');
    expect((await grade(`SELECT '1.5'::text AS v`, { equals: '1.50' })).strict.verdict).toBe('fail');
  });

  it('JSON null reads like SQL NULL; IS NULL, as documented, tells them apart', async () => {
    expect((await grade(`SELECT 'null'::jsonb AS doc`, { equals: null })).strict.verdict).toBe('pass');
    const isNull = `SELECT doc IS NULL AS unset FROM (SELECT 'null'::jsonb AS doc) d`;
    expect((await grade(isNull, { equals: true })).strict.verdict).toBe('fail');
  });

  it('compares arrays element by element with the element type', async () => {
    expect((await grade('SELECT tags FROM v WHERE id = 1', { equals: ['a', 'b'] })).strict.verdict).toBe(
      'pass',
    );
    expect((await grade('SELECT ARRAY[1, 2] AS xs', { equals: ['1', 2] })).strict.verdict).toBe('pass');
    expect((await grade("SELECT ARRAY['1', '2'] AS xs", { equals: [1, 2] })).strict.verdict).toBe('pass');
    expect((await grade("SELECT ARRAY['1e2'] AS xs", { equals: [100] })).strict.verdict).toBe('fail');
  });

  it('rows: each column by its type, in any order without ORDER BY', async () => {
    const sql = 'SELECT id, label, amount, doc FROM v';
    const expected = [
      { id: 2, label: 't', amount: 11.05, doc: { n: 9, ids: [1], ok: true } },
      { id: 1, label: '1e2', amount: 150, doc: { n: '9', ids: ['1'], ok: 'true' } },
    ];
    expect((await grade(sql, { rows: expected })).strict.verdict).toBe('pass');
    const wrong = [expected[0], { ...expected[1], doc: { n: 9, ids: [1], ok: true } }];
    const g = await grade(sql, { rows: wrong });
    expect(g.strict.verdict).toBe('fail');
    expect(g.loose.verdict).toBe('pass');
  });
});

describe('strict values: messages', () => {
  it('prints both sides in one form: numbers bare, whatever the driver gave', async () => {
    const g = await grade('SELECT amount FROM v WHERE id = 2', { equals: 17.99 });
    expect(g.strict.message).toBe('v[2].amount: expected 17.99, got 11.05');
    const rows = await grade('SELECT id, amount FROM v WHERE id = 2', { rows: [{ id: 2, amount: 17.99 }] });
    expect(rows.strict.message).toBe(
      'expected 1 row, got 1 row: missing {"amount":17.99,"id":2}; unexpected {"amount":11.05,"id":2}',
    );
  });

  it('cuts a long mismatch around the first difference, not at a fixed length', async () => {
    const long = 'x'.repeat(300);
    const sql = `SELECT '${long}' AS a, 'late' AS z ORDER BY 1`;
    const g = await grade(sql, { rows: [{ a: long, z: 'later' }] });
    expect(g.strict.verdict).toBe('fail');
    // The rows differ only in z, after 300 characters of a: the message shows that part.
    expect(g.strict.message).toMatch(/row 1: expected \.\.\.x+","z":"later"}, got \.\.\.x+","z":"late"}$/);
    const scalar = await grade(`SELECT '${long}y' AS a`, { equals: `${long}z` });
    expect(scalar.strict.message).toMatch(/^a: expected \.\.\.x+z", got \.\.\.x+y"$/);
  });
});
