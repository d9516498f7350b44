// The Docker side of `agent.isolation: container`, through Testcontainers: the agent image (given,
// or built from a Dockerfile in the checkout), a hardened container (no network, no capabilities,
// unprivileged user, read-only root, pids and memory limits), its exit, and its removal — also
// when stategate exits, since no reaper container may be running to do it.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { StartedTestContainer } from 'testcontainers';
import { detectContainerRuntime, noRuntimeMessage } from '../sandbox/container-runtime.js';

/** The user agents run as: unprivileged, whatever the image says. */
export const AGENT_USER = '10001:10001';
/** Limits of every agent container. */
export const AGENT_MEMORY_BYTES = 1024 ** 3;
export const AGENT_PIDS_LIMIT = 256;
const TMPFS = 'rw,nosuid,nodev,size=256m,mode=1777';
// Over a harness folder inside the checkout: empty, and closed to the agent (no capabilities).
const COVER = 'ro,nosuid,nodev,noexec,size=4k,mode=000';
const LABEL = 'dev.stategate.agent';

type Testcontainers = typeof import('testcontainers');
let loaded: Promise<Testcontainers> | undefined;

/** Loads testcontainers once a container runtime answered; the message says what to do when none does. */
export function loadTestcontainers(): Promise<Testcontainers> {
  loaded ??= (async () => {
    const probe = await detectContainerRuntime();
    if (!probe.answered) throw new Error(`agent.isolation: container: ${noRuntimeMessage(probe.tried)}`);
    return import('testcontainers');
  })();
  // A failed probe is not cached: the next side may find the runtime up.
  loaded.catch(() => {
    loaded = undefined;
  });
  return loaded;
}

/** The image to run: agent.image as given, or agent.dockerfile built from the checkout. */
export async function resolveAgentImage(opts: {
  image?: string;
  dockerfile?: string;
  checkoutDir: string;
}): Promise<{ image: string; built: boolean }> {
  if (opts.image) {
    await ensureImage(opts.image);
    return { image: opts.image, built: false };
  }
  if (!opts.dockerfile) throw new Error('agent.isolation: container needs agent.image or agent.dockerfile');
  const tc = await loadTestcontainers();
  const image = `localhost/stategate-agent:${randomBytes(6).toString('hex')}`;
  try {
    await tc.GenericContainer.fromDockerfile(opts.checkoutDir, opts.dockerfile).build(image, {
      deleteOnExit: false,
    });
  } catch (err) {
    throw new Error(
      `agent.dockerfile ${opts.dockerfile}: the image could not be built in ${opts.checkoutDir}: ${(err as Error).message}`,
    );
  }
  return { image, built: true };
}

/** Pulls agent.image unless it is here; a missing image refuses the side before any episode. */
async function ensureImage(image: string): Promise<void> {
  const tc = await loadTestcontainers();
  const client = await tc.getContainerRuntimeClient();
  const name = tc.ImageName.fromString(image);
  if (await client.image.exists(name)) return;
  try {
    await client.image.pull(name);
  } catch (err) {
    throw new Error(
      `agent.image ${image} is not on the Docker host and could not be pulled (${(err as Error).message}); build it there (e.g. scripts/agent-image.sh) or name another image`,
    );
  }
}

/** Removes an image built for this run (best effort). */
export async function removeImage(image: string): Promise<void> {
  const tc = await loadTestcontainers();
  const client = await tc.getContainerRuntimeClient();
  await client.container.dockerode
    .getImage(image)
    .remove({ force: true })
    .catch(() => undefined);
}

/** A host directory mounted into the container. */
export interface BindMount {
  source: string;
  target: string;
  mode: 'ro' | 'rw';
}

export interface AgentContainerSpec {
  image: string;
  binds: BindMount[];
  env: Record<string, string>;
  command: string[];
  workDir: string;
  /** uid:gid; AGENT_USER unless given. */
  user?: string;
  /** Folders inside the container to cover with an empty, closed filesystem. */
  covers?: string[];
}

// Containers started and not yet removed, removed synchronously if stategate exits first.
const live = new Set<string>();
let exitHookInstalled = false;

// Node cannot wait for a request in an exit handler; a short child process can.
const REMOVE_SCRIPT = `
const http = require('http');
const host = process.env.DOCKER_HOST || 'unix:///var/run/docker.sock';
const target = host.startsWith('unix://') ? { socketPath: host.slice(7) }
  : (() => { const u = new URL(host.replace(/^tcp:/, 'http:')); return { host: u.hostname, port: u.port }; })();
let left = process.argv.length - 1;
for (const id of process.argv.slice(1)) {
  const req = http.request({ ...target, method: 'DELETE', path: '/containers/' + id + '?force=true&v=true' }, (res) => {
    res.resume();
    res.on('end', () => { if (--left === 0) process.exit(0); });
  });
  req.on('error', () => { if (--left === 0) process.exit(0); });
  req.end();
}`;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    if (live.size === 0) return;
    spawnSync(process.execPath, ['-e', REMOVE_SCRIPT, ...live], { stdio: 'ignore', timeout: 15_000 });
  });
}

/** A running agent container. */
export interface AgentContainer {
  readonly id: string;
  /** Resolves with the exit code once the container's main process has ended. */
  readonly exited: Promise<number | null>;
  /** SIGTERM to the runner (which passes it to the agent's process group), SIGKILL after graceMs. */
  stop(graceMs: number): Promise<void>;
  /** Stops if needed and removes the container; idempotent. */
  remove(): Promise<void>;
  /** The container's own log (the runner's messages), last bytes. */
  logTail(): Promise<string>;
}

/** Starts one hardened agent container through Testcontainers. */
export async function startAgentContainer(spec: AgentContainerSpec): Promise<AgentContainer> {
  const tc = await loadTestcontainers();
  installExitHook();
  // Settings GenericContainer has no method for go straight into the create request.
  class Hardened extends tc.GenericContainer {
    // Known from creation on, so an exit while it starts still removes it.
    protected override async containerCreated(containerId: string): Promise<void> {
      live.add(containerId);
    }

    protected override async beforeContainerCreated(): Promise<void> {
      this.hostConfig.ReadonlyRootfs = true;
      this.hostConfig.PidsLimit = AGENT_PIDS_LIMIT;
      this.hostConfig.MemorySwap = AGENT_MEMORY_BYTES;
      this.hostConfig.SecurityOpt = ['no-new-privileges'];
      this.hostConfig.LogConfig = { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '1' } };
    }
  }
  const container = new Hardened(spec.image)
    .withNetworkMode('none')
    .withUser(spec.user ?? AGENT_USER)
    .withDroppedCapabilities('ALL')
    .withResourcesQuota({ memory: AGENT_MEMORY_BYTES / 1024 ** 3 })
    .withTmpFs({ '/tmp': TMPFS, ...Object.fromEntries((spec.covers ?? []).map((p) => [p, COVER])) })
    .withBindMounts(spec.binds)
    .withEnvironment(spec.env)
    .withWorkingDir(spec.workDir)
    .withEntrypoint([])
    .withCommand(spec.command)
    // Which stategate process started it, for whoever finds it running.
    .withLabels({ [LABEL]: 'true', [`${LABEL}.pid`]: String(process.pid) });
  let started: StartedTestContainer;
  try {
    started = await container.start();
  } catch (err) {
    throw new Error(
      `the agent container (image ${spec.image}) could not be started: ${(err as Error).message}`,
    );
  }
  const id = started.getId();
  live.add(id);
  const client = await tc.getContainerRuntimeClient();
  const handle = client.container.getById(id);
  const exited: Promise<number | null> = handle.wait().then(
    (r: { StatusCode?: number }) => r.StatusCode ?? null,
    () => null,
  );
  let removing: Promise<void> | undefined;
  return {
    id,
    exited,
    stop: async (graceMs) => {
      await handle.stop({ t: Math.max(1, Math.ceil(graceMs / 1000)) }).catch(() => undefined);
    },
    remove: () => {
      removing ??= (async () => {
        await handle.remove({ force: true, v: true }).catch(() => undefined);
        live.delete(id);
      })();
      return removing;
    },
    logTail: async () => {
      try {
        const buf = (await handle.logs({ stdout: true, stderr: true, tail: 20 })) as unknown as Buffer;
        // Each frame has an 8-byte header (stream, size); keep the text.
        return demuxText(buf);
      } catch {
        return '';
      }
    },
  };
}

/** The text of a multiplexed Docker log buffer. */
function demuxText(buf: Buffer): string {
  const parts: string[] = [];
  let i = 0;
  while (i + 8 <= buf.length) {
    const size = buf.readUInt32BE(i + 4);
    parts.push(buf.subarray(i + 8, i + 8 + size).toString('utf8'));
    i += 8 + size;
  }
  return parts.join('').trim();
}
