// A run that died (SIGKILL) leaves its suite role behind, and a clone that role marked IS_TEMPLATE
// so that DROP DATABASE refuses it. The next run's sweep removes both, and leaves every role that
// does not have the run-prefix shape, whatever its comment claims.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { sweepLeftovers } from '../../src/sandbox/leftovers.js';
import { onServer, TEST_DATABASE_URL } from '../helpers/engines.js';

describe('the leftover sweep after a run that died (postgres engine)', () => {
  it("drops the dead run's suite role and the database it marked a template, and no role it did not make", async () => {
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const comment = pg.escapeLiteral(
      JSON.stringify({
        stategate: 1,
        pid: dead,
        host: hostname(),
        pidStart: null,
        created: new Date().toISOString(),
      }),
    );
    const hex = randomBytes(4).toString('hex');
    const prefix = `sg_${hex}`;
    // What a killed run leaves: its suite role, and a clone that role marked IS_TEMPLATE.
    const owner = `${prefix}_o_1`;
    const db = `${prefix}_e_2`;
    // Not the run-prefix shape, though they claim the same dead owner: never stategate's to drop.
    const others = [`sg_${hex}`, `sgx_${hex}_o_1`, `sg_${hex}0_o_1`];
    await onServer(TEST_DATABASE_URL, async (c) => {
      try {
        await c.query(`CREATE ROLE ${owner} LOGIN; COMMENT ON ROLE ${owner} IS ${comment}`);
        await c.query(`CREATE DATABASE ${db} OWNER ${owner}`);
        await c.query(`COMMENT ON DATABASE ${db} IS ${comment}; ALTER DATABASE ${db} IS_TEMPLATE true`);
        for (const r of others) await c.query(`CREATE ROLE ${r}; COMMENT ON ROLE ${r} IS ${comment}`);
        const swept = await sweepLeftovers(TEST_DATABASE_URL);
        expect(swept.failed.filter((f) => f.startsWith(prefix))).toEqual([]);
        const left = await c.query(
          `SELECT rolname AS name FROM pg_roles WHERE rolname = ANY($1)
           UNION ALL SELECT datname FROM pg_database WHERE datname = $2 ORDER BY 1`,
          [[owner, ...others], db],
        );
        expect(left.rows.map((r) => r.name)).toEqual([...others].sort());
      } finally {
        await c.query(`ALTER DATABASE ${db} IS_TEMPLATE false`).catch(() => undefined);
        await c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
        for (const r of [owner, ...others]) await c.query(`DROP ROLE IF EXISTS ${r}`);
      }
    });
  }, 180_000);
});
