// A declared SQLSTATE stands for the tool's error only when the database server raised it. Node's
// socket errors carry codes of five capitals too ('EPIPE'), so a twin listing that code would
// otherwise turn a connection lost in the middle of a call into an answer graded as the agent's.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TwinTool } from '../../src/config/schema.js';
import { raisedErrorAnswer, sqlErrorAnswer } from '../../src/gateway/run-tool.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';

const tool = {
  ...TwinTool.parse({
    input: { type: 'object', properties: {} },
    sql: 'SELECT 1',
    errors: { EPIPE: { status: 409, code: 'PIPE_BUSY' } },
  }),
  name: 'pipe',
  file: 'twins/pipe.yaml',
};

let client: pg.Client;
beforeAll(async () => {
  client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
}, 60_000);
afterAll(async () => {
  await client?.end();
});

describe('raisedErrorAnswer reads SQLSTATEs the server sent, not socket error codes', () => {
  it('a RAISE with the listed code is the tool error', async () => {
    const err = await client
      .query(`DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = 'EPIPE', MESSAGE = 'pipe busy'; END $$`)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toMatchObject({ code: 'EPIPE' });
    expect(raisedErrorAnswer(tool, err)).toEqual({
      ok: false,
      status: 409,
      code: 'PIPE_BUSY',
      message: 'pipe busy',
    });
  });

  it("a socket error with the same code stays the harness's error", () => {
    // What Node hands the driver when the server's end of the connection is gone.
    const err = Object.assign(new Error('write EPIPE'), { code: 'EPIPE', errno: -32, syscall: 'write' });
    expect(raisedErrorAnswer(tool, err)).toBeNull();
    expect(sqlErrorAnswer(err)).toMatchObject({ ok: false, status: 500, harness: true });
  });
});
