// The testcontainers engine: a throwaway PostgreSQL container per run, handed to the postgres engine.

import { randomBytes } from 'node:crypto';
import type { CloneStrategy } from './cluster.js';
import { detectContainerRuntime, noRuntimeMessage } from './container-runtime.js';
import { openEngine } from './postgres.js';
import type { Engine } from './types.js';

/** Options of createTestcontainersEngine. */
export interface TestcontainersEngineOptions {
  /** The PostgreSQL image, e.g. postgres:16-alpine. */
  image: string;
  reason?: string;
  runPrefix?: string;
  cloneStrategy?: CloneStrategy;
}

/** Starts a PostgreSQL container (failing within milliseconds when no container runtime answers). */
export async function createTestcontainersEngine(opts: TestcontainersEngineOptions): Promise<Engine> {
  const probe = await detectContainerRuntime();
  if (!probe.answered) throw new Error(noRuntimeMessage(probe.tried));
  let module: typeof import('@testcontainers/postgresql');
  try {
    module = await import('@testcontainers/postgresql');
  } catch (e) {
    throw new Error(
      `the testcontainers engine needs the @testcontainers/postgresql package, which could not be loaded: ${(e as Error).message}. Run \`npm ci\` where stategate runs, or use \`engine: embedded\`.`,
    );
  }
  // Never the library's well-known test/test: the port is published on the host, where the agent is.
  const container = await new module.PostgreSqlContainer(opts.image)
    .withPassword(randomBytes(18).toString('base64url'))
    .start();
  try {
    return await openEngine(
      {
        adminUrl: container.getConnectionUri(),
        reason: opts.reason ?? `testcontainers: ${opts.image} via ${probe.answered}`,
        runPrefix: opts.runPrefix,
        cloneStrategy: opts.cloneStrategy,
      },
      {
        name: 'testcontainers',
        stop: async () => {
          await container.stop();
        },
        // Nothing synchronous can stop a container; testcontainers' reaper removes it when we are gone.
        stopSync: () => undefined,
      },
    );
  } catch (e) {
    await container.stop().catch(() => undefined);
    throw e;
  }
}
