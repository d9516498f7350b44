// The engines every database-backed test runs on: the postgres engine on the test server, and the
// embedded engine on one server shared by the whole test file (one server start per file). Suites
// that also hold on the testcontainers engine add testcontainersEngine() (one container per file);
// they import ../helpers/docker.js first, which points DOCKER_HOST at the test daemon.
import pg from 'pg';
import { afterAll } from 'vitest';
import { type EmbeddedServer, openEmbeddedEngine, startEmbeddedServer } from '../../src/sandbox/embedded.js';
import { createPostgresEngine } from '../../src/sandbox/postgres.js';
import {
  type ContainerServer,
  openContainerEngine,
  startPostgresContainer,
} from '../../src/sandbox/testcontainers.js';
import type { Engine, EngineName } from '../../src/sandbox/types.js';

/** The admin URL of the test server. */
export const TEST_DATABASE_URL =
  process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs `fn` with a client connected to the server at `url`, and disconnects. */
export async function onServer<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

let shared: Promise<EmbeddedServer> | null = null;

/** The embedded server of this test file, started on first use and stopped after the file. */
export function sharedEmbeddedServer(): Promise<EmbeddedServer> {
  shared ??= startEmbeddedServer();
  return shared;
}

let sharedContainer: Promise<ContainerServer> | null = null;

/** The PostgreSQL image the container tests use (scripts/postgres-image.sh builds it locally). */
export const TEST_PG_IMAGE = process.env.STATEGATE_TEST_PG_IMAGE ?? 'postgres:16-alpine';

afterAll(async () => {
  if (shared) await (await shared).stop();
  shared = null;
  if (sharedContainer) await (await sharedContainer.catch(() => null))?.stop();
  sharedContainer = null;
});

/** One engine a suite can run on. */
export interface TestEngine {
  name: EngineName;
  /** A fresh engine with its own run prefix; close() drops its databases. */
  create(): Promise<Engine>;
  /** A superuser URL of the engine's server, for a test to reach behind the harness. */
  adminUrl(): Promise<string>;
}

/** Every engine, for suites that must hold on each. */
export function engines(): TestEngine[] {
  return [
    {
      name: 'postgres',
      create: () => createPostgresEngine({ adminUrl: TEST_DATABASE_URL, reason: 'test server' }),
      adminUrl: async () => TEST_DATABASE_URL,
    },
    {
      name: 'embedded',
      create: async () => openEmbeddedEngine(await sharedEmbeddedServer()),
      adminUrl: async () => (await sharedEmbeddedServer()).adminUrl,
    },
  ];
}

/**
 * The testcontainers engine on one container of TEST_PG_IMAGE shared by the test file; `ready`
 * throws why it cannot run (e.g. no daemon in CI).
 */
export function testcontainersEngine(ready: () => void): TestEngine {
  return {
    name: 'testcontainers',
    create: async () => {
      ready();
      sharedContainer ??= startPostgresContainer(TEST_PG_IMAGE);
      return openContainerEngine(await sharedContainer, { reason: 'test container' });
    },
    adminUrl: async () => {
      ready();
      sharedContainer ??= startPostgresContainer(TEST_PG_IMAGE);
      return (await sharedContainer).adminUrl;
    },
  };
}
