// Is there a container runtime? Asked without loading testcontainers, which would otherwise spend
// seconds looking before it fails: each candidate socket gets one `GET /_ping` with a short timeout.
import { connect, type Socket } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where a runtime answered, and everything that was tried. */
export interface RuntimeProbe {
  /** The first candidate that answered, e.g. `/var/run/docker.sock` or `tcp://10.0.0.5:2375`. */
  answered: string | null;
  tried: string[];
}

type Target = { label: string; path: string } | { label: string; host: string; port: number; tls: boolean };

/** The candidates: DOCKER_HOST when it is set, else the usual sockets. */
export function runtimeCandidates(env: NodeJS.ProcessEnv = process.env): Target[] {
  const dockerHost = env.DOCKER_HOST;
  if (dockerHost) {
    if (dockerHost.startsWith('unix://'))
      return [{ label: dockerHost, path: dockerHost.slice('unix://'.length) }];
    const tcp = /^(?:tcp|http|https):\/\/\[?([^\]/]+?)\]?:(\d+)/.exec(dockerHost);
    if (tcp)
      return [{ label: dockerHost, host: tcp[1], port: Number(tcp[2]), tls: Boolean(env.DOCKER_TLS_VERIFY) }];
    return [{ label: dockerHost, path: dockerHost }];
  }
  const paths = ['/var/run/docker.sock'];
  if (env.XDG_RUNTIME_DIR) paths.push(join(env.XDG_RUNTIME_DIR, 'docker.sock'));
  paths.push(join(homedir(), '.docker', 'run', 'docker.sock'));
  return paths.map((path) => ({ label: path, path }));
}

function ping(target: Target, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let socket: Socket;
    let reply = '';
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket =
      'path' in target ? connect({ path: target.path }) : connect({ host: target.host, port: target.port });
    socket.on('error', () => done(false));
    socket.on('connect', () => {
      // A TLS daemon needs client certificates to answer; an open port is as far as we can ask.
      if ('tls' in target && target.tls) return done(true);
      socket.write('GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n');
    });
    socket.on('data', (d) => {
      reply += d.toString();
      if (/\r?\n/.test(reply)) done(/^HTTP\/1\.[01] 200/.test(reply));
    });
    socket.on('end', () => done(/^HTTP\/1\.[01] 200/.test(reply)));
  });
}

/** Pings every candidate at once (~300 ms at most) and reports the first, in order, that answered. */
export async function detectContainerRuntime(
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 300,
): Promise<RuntimeProbe> {
  const candidates = runtimeCandidates(env);
  const answers = await Promise.all(candidates.map((c) => ping(c, timeoutMs)));
  const i = answers.indexOf(true);
  return { answered: i < 0 ? null : candidates[i].label, tried: candidates.map((c) => c.label) };
}

/** The message for a run that needs a container runtime and found none. */
export function noRuntimeMessage(tried: string[]): string {
  return (
    `no container runtime answered (tried ${tried.join(', ')}). Start Docker, or set DOCKER_HOST, ` +
    'or use `engine: postgres` with a `services:` postgres container and `url: ${STATEGATE_DATABASE_URL}`, or `engine: embedded`.'
  );
}
