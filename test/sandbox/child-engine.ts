// A run that gets killed: creates an engine, a template and two clones, says where they are, then waits.
// Usage: node --import tsx test/sandbox/child-engine.ts postgres|embedded|testcontainers [dataDir] [--exit]
// testcontainers starts a container of STATEGATE_TEST_PG_IMAGE (default postgres:16-alpine) on DOCKER_HOST.
// With --exit it calls process.exit(3) instead of waiting, without closing the engine. With --detach
// it reserves a pool of two instead of taking two clones, reads a line on stdin, then closes the
// engine with detach (the drops go to a child process) and ends on its own, printing "closed".
import { createEmbeddedEngine } from '../../src/sandbox/embedded.js';
import { createPostgresEngine } from '../../src/sandbox/postgres.js';
import { createTestcontainersEngine } from '../../src/sandbox/testcontainers.js';

const [kind, dataDir] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const adminUrl = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const engine =
  kind === 'embedded'
    ? await createEmbeddedEngine({ dataDir: dataDir || undefined })
    : kind === 'testcontainers'
      ? await createTestcontainersEngine({
          image: process.env.STATEGATE_TEST_PG_IMAGE ?? 'postgres:16-alpine',
        })
      : await createPostgresEngine({ adminUrl });
const template = await engine.buildTemplate({
  schema: [{ file: 'schema.sql', sql: 'CREATE TABLE t (id int PRIMARY KEY)' }],
  fixtures: [],
});
const detach = process.argv.includes('--detach');
// --detach: the databases of a run that ended normally, pooled and holding no connection.
const clones = detach ? [] : [await template.clone('one'), await template.clone('two')];
if (detach) await template.reserve(2);
process.stdout.write(
  `${JSON.stringify({ runPrefix: engine.runPrefix, databases: clones.map((c) => c.name), url: clones[0]?.url })}\n`,
);
if (process.argv.includes('--exit')) process.exit(3);
if (detach) {
  await new Promise((resolve) => process.stdin.once('data', resolve));
  process.stdin.pause();
  await engine.close({ detach: true });
  process.stdout.write('closed\n');
} else {
  setInterval(() => undefined, 60_000);
}
