// The testcontainers engine: a throwaway PostgreSQL container per run, handed to the postgres engine.
// The run removes its container itself (on close, on SIGINT/SIGTERM, and at exit): where the reaper
// container cannot run (no registry, TESTCONTAINERS_RYUK_DISABLED) nothing else would.

import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { CloneStrategy } from './cluster.js';
import { detectContainerRuntime, noRuntimeMessage, runtimeCandidates } from './container-runtime.js';
import { openEngine } from './postgres.js';
import { registerExitCleanup } from './process-exit.js';
import type { Engine } from './types.js';

/** Options of createTestcontainersEngine. */
export interface TestcontainersEngineOptions {
  /** The PostgreSQL image, e.g. postgres:16-alpine. */
  image: string;
  reason?: string;
  runPrefix?: string;
  cloneStrategy?: CloneStrategy;
}

/** The label every container of a run carries: `<pid>-<random>`, so cleanup finds exactly its own. */
export const RUN_LABEL = 'dev.stategate.engine.run';

// Run in a child process at exit, where nothing asynchronous can: removes (force, with volumes) the
// containers carrying the label, through the Docker API of the runtime that answered.
const REMOVE_SCRIPT = `
const http = require('node:http');
const [target, label] = process.argv.slice(1);
const at = target.startsWith('/') ? { socketPath: target } : { host: target.split(':')[0], port: Number(target.split(':')[1]) };
const call = (method, path) => new Promise((ok) => {
  const req = http.request({ ...at, method, path, timeout: 10000 }, (res) => {
    let body = '';
    res.on('data', (d) => { body += d; });
    res.on('end', () => ok(body));
  });
  req.on('error', () => ok(''));
  req.on('timeout', () => req.destroy());
  req.end();
});
(async () => {
  const filters = encodeURIComponent(JSON.stringify({ label: [label] }));
  let list = [];
  try { list = JSON.parse(await call('GET', '/containers/json?all=1&filters=' + filters)); } catch {}
  await Promise.all(list.map((c) => call('DELETE', '/containers/' + c.Id + '?force=1&v=1')));
})();
`;

/** A unix socket path or loopback host:port for the exit-time removal; null for TLS daemons. */
function apiTarget(answered: string): string | null {
  const target = runtimeCandidates({ ...process.env, DOCKER_HOST: answered }).find(
    (c) => c.label === answered,
  );
  if (!target) return null;
  if ('path' in target) return target.path;
  return target.tls ? null : `${target.host}:${target.port}`;
}

function removeSync(answered: string, label: string): void {
  const target = apiTarget(answered);
  if (!target) return;
  spawnSync(process.execPath, ['-e', REMOVE_SCRIPT, target, label], { stdio: 'ignore', timeout: 20_000 });
}

/** A running PostgreSQL container of this run. */
export interface ContainerServer {
  /** A superuser URL on the container's published port (loopback). */
  readonly adminUrl: string;
  /** The image, the runtime and the container, for the terminal. */
  readonly detail: string;
  /** Stops and removes the container. Idempotent. */
  stop(): Promise<void>;
  /** The same, synchronously (for process exit). */
  stopSync(): void;
}

/**
 * Starts a PostgreSQL container of `image` (failing within milliseconds when no container runtime
 * answers). From the moment it is asked for, a signal or the process's exit removes it.
 */
export async function startPostgresContainer(image: string): Promise<ContainerServer> {
  const probe = await detectContainerRuntime();
  if (!probe.answered) throw new Error(noRuntimeMessage(probe.tried));
  const answered = probe.answered;
  let module: typeof import('@testcontainers/postgresql');
  try {
    module = await import('@testcontainers/postgresql');
  } catch (e) {
    throw new Error(
      `the testcontainers engine needs the @testcontainers/postgresql package, which could not be loaded: ${(e as Error).message}. Run \`npm ci\` where stategate runs, or use \`engine: embedded\`.`,
    );
  }
  const runId = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const label = `${RUN_LABEL}=${runId}`;
  // Never the library's well-known test/test: the port is published on the host, where the agent is.
  const starting = new module.PostgreSqlContainer(image)
    .withPassword(randomBytes(18).toString('base64url'))
    .withLabels({ [RUN_LABEL]: runId })
    .start();
  // `done` once the container is gone; until then the exit-time removal still applies, also while an
  // asynchronous stop is under way (the process may exit before it finishes).
  let done = false;
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      // While it starts (seconds), a signal waits for it, then removes it.
      const started = await starting.catch(() => null);
      // A start that failed may still have created the container: the label finds it.
      if (started) await started.stop().catch(() => removeSync(answered, label));
      else removeSync(answered, label);
      done = true;
      unregister();
    })();
    return stopping;
  };
  const stopSync = () => {
    if (done) return;
    done = true;
    unregister();
    removeSync(answered, label);
  };
  const unregister = registerExitCleanup({ close: stop, closeSync: stopSync });
  try {
    const container = await starting;
    return {
      adminUrl: container.getConnectionUri(),
      detail: `image ${image} via ${answered}, container ${container.getId().slice(0, 12)}`,
      stop,
      stopSync,
    };
  } catch (e) {
    // A container that was created but never became ready.
    stopSync();
    throw e;
  }
}

/** An engine on a running container; closing it drops its databases and leaves the container. */
export function openContainerEngine(
  server: ContainerServer,
  opts: Omit<TestcontainersEngineOptions, 'image'> = {},
): Promise<Engine> {
  return openEngine(
    {
      adminUrl: server.adminUrl,
      reason: opts.reason,
      detail: server.detail,
      runPrefix: opts.runPrefix,
      cloneStrategy: opts.cloneStrategy,
    },
    { name: 'testcontainers' },
  );
}

/** Starts a PostgreSQL container for this run; closing the engine stops and removes it. */
export async function createTestcontainersEngine(opts: TestcontainersEngineOptions): Promise<Engine> {
  const server = await startPostgresContainer(opts.image);
  try {
    return await openEngine(
      {
        adminUrl: server.adminUrl,
        reason: opts.reason ?? `testcontainers: ${opts.image}`,
        detail: server.detail,
        runPrefix: opts.runPrefix,
        cloneStrategy: opts.cloneStrategy,
      },
      { name: 'testcontainers', stop: server.stop, stopSync: server.stopSync },
    );
  } catch (e) {
    await server.stop();
    throw e;
  }
}
