// `engine: auto`: postgres when a URL is set, else testcontainers when a container runtime answers,
// else embedded; the reason says which and why in one short line, the detail what was probed.
import type { DatabaseConfig } from '../config/schema.js';
import { detectContainerRuntime } from './container-runtime.js';
import { createEmbeddedEngine } from './embedded.js';
import { sweepLeftovers } from './leftovers.js';
import { createPostgresEngine } from './postgres.js';
import { createTestcontainersEngine } from './testcontainers.js';
import type { Engine, EngineName } from './types.js';

/** What the command line may override. */
export interface EngineOverrides {
  /** --engine (or the action's input): wins over database.engine. */
  engine?: 'auto' | EngineName;
  /** How the user wrote that override, for the reason line (default `--engine`). */
  engineOption?: string;
  runPrefix?: string;
}

/** The engine a run uses, and why; what `engine: auto` would pick. */
export async function chooseEngine(db: DatabaseConfig, overrides: EngineOverrides = {}): Promise<Engine> {
  const requested = overrides.engine ?? db.engine;
  const option = overrides.engineOption ?? '--engine';
  const asked = (name: EngineName) => (overrides.engine ? `${option} ${name}` : `database.engine: ${name}`);
  const url = db.url?.trim() ? db.url.trim() : undefined;
  const runPrefix = overrides.runPrefix;

  const postgres = async (reason: string) => {
    if (!url) throw new Error('engine postgres needs database.url, e.g. url: ${STATEGATE_DATABASE_URL}');
    // Databases of earlier runs whose process is gone would otherwise pile up on a shared server.
    await sweepLeftovers(url).catch(() => undefined);
    return createPostgresEngine({ adminUrl: url, reason, runPrefix });
  };
  // The reason is one short line for the report; what was probed goes into the terminal's detail.
  switch (requested) {
    case 'postgres':
      return postgres(asked('postgres'));
    case 'embedded':
      return createEmbeddedEngine({ reason: asked('embedded'), runPrefix });
    case 'testcontainers':
      return createTestcontainersEngine({ image: db.image, reason: asked('testcontainers'), runPrefix });
  }
  if (url) return postgres('auto: database.url is set');
  const probe = await detectContainerRuntime();
  if (probe.answered) {
    return createTestcontainersEngine({
      image: db.image,
      reason: 'auto: no database.url, a container runtime answered',
      runPrefix,
    });
  }
  return createEmbeddedEngine({
    reason: 'auto: no database.url, no container runtime',
    detail: `no container runtime answered at ${probe.tried.join(', ')}`,
    runPrefix,
  });
}
