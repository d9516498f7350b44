// The engines every database-backed test runs on: the postgres engine on the test server, and the
// embedded engine on one server shared by the whole test file (one server start per file).
import { afterAll } from 'vitest';
import { type EmbeddedServer, openEmbeddedEngine, startEmbeddedServer } from '../../src/sandbox/embedded.js';
import { createPostgresEngine } from '../../src/sandbox/postgres.js';
import type { Engine, EngineName } from '../../src/sandbox/types.js';

/** The admin URL of the test server. */
export const TEST_DATABASE_URL =
  process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let shared: Promise<EmbeddedServer> | null = null;

/** The embedded server of this test file, started on first use and stopped after the file. */
export function sharedEmbeddedServer(): Promise<EmbeddedServer> {
  shared ??= startEmbeddedServer();
  return shared;
}

afterAll(async () => {
  if (shared) await (await shared).stop();
  shared = null;
});

/** One engine a suite can run on. */
export interface TestEngine {
  name: EngineName;
  /** A fresh engine with its own run prefix; close() drops its databases. */
  create(): Promise<Engine>;
}

/** Every engine, for suites that must hold on each. */
export function engines(): TestEngine[] {
  return [
    {
      name: 'postgres',
      create: () => createPostgresEngine({ adminUrl: TEST_DATABASE_URL, reason: 'test server' }),
    },
    { name: 'embedded', create: async () => openEmbeddedEngine(await sharedEmbeddedServer()) },
  ];
}
