// The postgres engine: sandboxes on a server the harness may CREATE DATABASE on. The embedded and
// testcontainers engines start a server and hand its URL here, so every semantic is the same.
import { type CloneStrategy, Cluster } from './cluster.js';
import { assertRunPrefix, newRunPrefix } from './names.js';
import { registerExitCleanup } from './process-exit.js';
import { buildTemplate } from './template.js';
import type { Engine, EngineName } from './types.js';

/** Options of createPostgresEngine. */
export interface PostgresEngineOptions {
  /** A URL of a role that may CREATE DATABASE and CREATE ROLE (suite SQL runs as a role it creates). */
  adminUrl: string;
  reason?: string;
  /** The long detail behind the reason (terminal only). */
  detail?: string;
  /** `sg_` and 8 hex digits; random by default. */
  runPrefix?: string;
  /** How clones copy the template on PostgreSQL 15 and later (default WAL_LOG). */
  cloneStrategy?: CloneStrategy;
  /** Clones each template keeps ready ahead of clone() calls (default 2; 0 makes every clone on demand). */
  clonesAhead?: number;
}

/** What an engine that owns its server adds: its name, and how to stop the server. */
export interface ServerHooks {
  name: EngineName;
  /** Stops the server and removes its files (after every database is dropped). */
  stop?: () => Promise<void>;
  /** The synchronous last resort at process exit. */
  stopSync?: () => void;
}

/** Opens an engine on a server the harness may CREATE DATABASE on. */
export function createPostgresEngine(opts: PostgresEngineOptions): Promise<Engine> {
  return openEngine(opts, { name: 'postgres' });
}

/** Opens an engine on a server URL; engines that start their own server pass hooks to stop it. */
export async function openEngine(opts: PostgresEngineOptions, hooks: ServerHooks): Promise<Engine> {
  const runPrefix = opts.runPrefix ?? newRunPrefix();
  assertRunPrefix(runPrefix);
  const cluster = await Cluster.connect(opts.adminUrl, runPrefix, opts.cloneStrategy);
  let closing: Promise<void> | null = null;
  const close = (closeOpts: { detach?: boolean } = {}): Promise<void> => {
    closing ??= (async () => {
      try {
        // A server that is stopped next takes its databases with it.
        await cluster.close({ dropAll: !hooks.stop, detach: closeOpts.detach });
      } finally {
        await hooks.stop?.();
        unregister();
      }
    })();
    return closing;
  };
  const unregister = registerExitCleanup({
    close,
    closeSync: () => {
      if (hooks.stopSync) hooks.stopSync();
      else cluster.closeSync();
    },
  });
  return {
    name: hooks.name,
    reason: opts.reason ?? `${hooks.name}: PostgreSQL ${Math.floor(cluster.version / 10000)}`,
    ...(opts.detail ? { detail: opts.detail } : {}),
    runPrefix,
    buildTemplate: (spec) => buildTemplate(cluster, spec, opts.clonesAhead ?? 2),
    close,
  };
}
