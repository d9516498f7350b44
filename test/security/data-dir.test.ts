// Attack: an agent goes for the database server's files: it looks for data directories in other
// processes' command lines and in the usual temporary places, and is also told the exact path; it
// tries to list them, read pg_hba.conf and put `trust` first in it (the way to connect as the
// superuser). Every attempt fails, on both engines, and pg_hba.conf is unchanged on disk.
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  defaultDataParent,
  type EmbeddedServer,
  startEmbeddedServer,
} from '../../src/sandbox/embedded-server.js';
import { type AttackSuite, attackSuite, runAttack } from './attack-suite.js';

const suites: AttackSuite[] = [];
afterAll(() => {
  for (const s of suites) rmSync(s.dir, { recursive: true, force: true });
});

describe('an agent going for the database server files', () => {
  for (const engine of ['embedded', 'postgres'] as const) {
    it(`finds no data directory it can read or change on the ${engine} engine`, {
      timeout: 300_000,
    }, async () => {
      const suite = attackSuite('data-dir-hunter.mjs', {});
      suites.push(suite);
      const { found, episode } = await runAttack(suite, engine);
      expect(found.attempts.filter((a: { ok: boolean }) => a.ok)).toEqual([]);
      expect(episode.record.diff.tables).toEqual({});
      expect(episode.passed).toBe(true);
    });
  }

  // Outside /tmp, so no private /tmp hides it by chance: /var/tmp, and where the embedded engine
  // puts it by default (/dev/shm where that is a tmpfs with room).
  for (const place of ['/var/tmp', defaultDataParent()]) {
    it(`cannot read or change a data directory it was told the path of, in ${place}`, {
      timeout: 300_000,
    }, async () => {
      // The run uses this server through its admin URL.
      let server: EmbeddedServer | undefined;
      try {
        server = await startEmbeddedServer({ dataDir: place });
        const hba = `${server.dir}/data/pg_hba.conf`;
        const before = readFileSync(hba, 'utf8');
        const suite = attackSuite('data-dir-hunter.mjs', { known: [server.dir], places: [place] });
        suites.push(suite);
        const { found, episode } = await runAttack(suite, 'postgres', server.adminUrl);
        expect(found.candidates).toContain(server.dir);
        const tried = found.attempts.filter((a: { path: string }) => a.path.startsWith(server!.dir));
        expect(tried.map((a: { op: string }) => a.op)).toEqual([
          'list',
          'list',
          'read',
          'prepend trust',
          'append trust',
        ]);
        expect(tried.filter((a: { ok: boolean }) => a.ok)).toEqual([]);
        expect(readFileSync(hba, 'utf8')).toBe(before);
        expect(episode.record.diff.tables).toEqual({});
      } finally {
        await server?.stop();
      }
    });
  }
});
