// The embedded engine: one PostgreSQL server per run (embedded-server.ts), handed to the same code
// as the postgres engine, so every semantic is the same by construction.
import type { CloneStrategy } from './cluster.js';
import { type EmbeddedServer, startEmbeddedServer } from './embedded-server.js';
import { openEngine } from './postgres.js';
import type { Engine } from './types.js';

export { type EmbeddedServer, startEmbeddedServer } from './embedded-server.js';

/** The embedded server's default: it runs with fsync off (embedded-server.ts). */
const EMBEDDED_CLONE_STRATEGY: CloneStrategy = 'FILE_COPY';

/** Options of createEmbeddedEngine. */
export interface EmbeddedEngineOptions {
  /** A directory to create the server's temporary directory in (default: defaultDataParent()). */
  dataDir?: string;
  reason?: string;
  /** The long detail behind the reason (terminal only). */
  detail?: string;
  runPrefix?: string;
  /**
   * How clones copy the template. Default FILE_COPY: its checkpoint costs no flush with fsync off,
   * and a pool of 64 is made in half the time of WAL_LOG (docs/engines.md).
   */
  cloneStrategy?: CloneStrategy;
  /** Clones each template keeps ready ahead (default 2). */
  clonesAhead?: number;
}

/** An engine on an already running embedded server; closing it drops its databases and leaves the server. */
export function openEmbeddedEngine(
  server: EmbeddedServer,
  opts: Omit<EmbeddedEngineOptions, 'dataDir'> = {},
): Promise<Engine> {
  return openEngine(
    {
      adminUrl: server.adminUrl,
      reason: opts.reason,
      runPrefix: opts.runPrefix,
      cloneStrategy: opts.cloneStrategy ?? EMBEDDED_CLONE_STRATEGY,
      clonesAhead: opts.clonesAhead,
    },
    { name: 'embedded' },
  );
}

/** Starts an embedded server for this run; closing the engine stops the server and removes its files. */
export async function createEmbeddedEngine(opts: EmbeddedEngineOptions = {}): Promise<Engine> {
  const server = await startEmbeddedServer({ dataDir: opts.dataDir });
  const detail = [opts.detail, server.binariesNote && `PostgreSQL binaries ${server.binariesNote}`]
    .filter(Boolean)
    .join('; ');
  try {
    return await openEngine(
      {
        adminUrl: server.adminUrl,
        reason: opts.reason,
        detail: detail || undefined,
        runPrefix: opts.runPrefix,
        cloneStrategy: opts.cloneStrategy ?? EMBEDDED_CLONE_STRATEGY,
        clonesAhead: opts.clonesAhead,
      },
      { name: 'embedded', stop: server.stop, stopSync: server.stopSync },
    );
  } catch (e) {
    await server.stop();
    throw e;
  }
}
