// `engine: auto` (docs/formats/stategate.md): postgres when a URL is set, else testcontainers when a
// container runtime answers, else embedded; the reason says which and why.
import type { DatabaseConfig } from '../config/schema.js';
import { detectContainerRuntime } from './container-runtime.js';
import { createEmbeddedEngine } from './embedded.js';
import { sweepLeftovers } from './leftovers.js';
import { createPostgresEngine } from './postgres.js';
import { createTestcontainersEngine } from './testcontainers.js';
import type { Engine, EngineName } from './types.js';

/** What the command line may override. */
export interface EngineOverrides {
  /** --engine: wins over database.engine. */
  engine?: 'auto' | EngineName;
  runPrefix?: string;
}

/** The engine a run uses, and why; what `engine: auto` would pick. */
export async function chooseEngine(db: DatabaseConfig, overrides: EngineOverrides = {}): Promise<Engine> {
  const requested = overrides.engine ?? db.engine;
  const from = overrides.engine ? '--engine' : 'database.engine';
  const url = db.url?.trim() ? db.url.trim() : undefined;
  const runPrefix = overrides.runPrefix;

  const postgres = async (reason: string) => {
    if (!url) throw new Error('engine postgres needs database.url, e.g. url: ${STATEGATE_DATABASE_URL}');
    // Databases of earlier runs whose process is gone would otherwise pile up on a shared server.
    await sweepLeftovers(url).catch(() => undefined);
    return createPostgresEngine({ adminUrl: url, reason, runPrefix });
  };
  switch (requested) {
    case 'postgres':
      return postgres(`postgres: ${from} is postgres`);
    case 'embedded':
      return createEmbeddedEngine({ reason: `embedded: ${from} is embedded`, runPrefix });
    case 'testcontainers':
      return createTestcontainersEngine({
        image: db.image,
        reason: `testcontainers: ${from} is testcontainers (${db.image})`,
        runPrefix,
      });
  }
  if (url) return postgres('auto: database.url is set, so the postgres engine');
  const probe = await detectContainerRuntime();
  if (probe.answered) {
    return createTestcontainersEngine({
      image: db.image,
      reason: `auto: no database.url, a container runtime answered at ${probe.answered}, so the testcontainers engine (${db.image})`,
      runPrefix,
    });
  }
  return createEmbeddedEngine({
    reason: `auto: no database.url, no container runtime answered at ${probe.tried.join(', ')}, so the embedded engine`,
    runPrefix,
  });
}
