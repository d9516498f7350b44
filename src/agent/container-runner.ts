// The process that runs as PID 1 inside an agent container (`agent.isolation: container`). The
// container has no network at all; this script bridges the few addresses the agent may use:
// 127.0.0.1:PORT inside (gateway, exposed database) to Unix sockets the harness serves in a
// read-only mount, and, for agent.serve, the server's port back out through connections the runner
// opens to the harness on request. Then it runs the agent with /bin/sh -c, stdin from a file,
// stdout/stderr on sockets the harness reads.
// Shipped as text and written next to each container's spec, so the bundled action carries it too.
import { RUNNER_FORWARD_SOURCE } from './runner-forward.js';

/** Where the runner and its spec are mounted inside the container (read-only). */
export const RUNNER_MOUNT = '/stategate/side';

/** agent.serve's tunnel (runner-forward.ts): the server's port inside, the harness's two sockets. */
export interface RunnerTunnel {
  port: number;
  control: string;
  data: string;
}

/** What the runner does, read from a JSON file whose path is its only argument. */
export interface RunnerSpec {
  /** Run with /bin/sh -c. */
  command: string;
  /** A file to use as stdin; without it stdin is /dev/null. */
  stdin?: string;
  /** Unix sockets (served by the harness) for the command's stdout and stderr; may be the same. */
  stdout: string;
  stderr: string;
  /** 127.0.0.1:port inside, forwarded to a Unix socket the harness serves. */
  forwards: { port: number; socket: string }[];
  /**
   * agent.serve: the server's port carried out through connections the runner opens to the harness
   * (the tunnel of runner-forward.ts). The container needs no writable mount.
   */
  tunnel?: RunnerTunnel;
}

// Plain CommonJS for any Node 18+ the image carries; no dependencies.
export const RUNNER_SOURCE = String.raw`'use strict';
const net = require('net');
const fs = require('fs');
const { spawn } = require('child_process');
const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const say = (m) => process.stderr.write('stategate-runner: ' + m + '\n');

${RUNNER_FORWARD_SOURCE}
async function main() {
  for (const f of spec.forwards) await forward(f.port, f.socket);
  // Before the agent starts, so the control connection is surely the runner's.
  if (spec.tunnel) await tunnel(spec.tunnel);
  const out = await connectUnix(spec.stdout);
  const err = spec.stderr === spec.stdout ? out : await connectUnix(spec.stderr);
  const stdin = spec.stdin ? fs.openSync(spec.stdin, 'r') : 'ignore';
  const child = spawn('/bin/sh', ['-c', spec.command], { stdio: [stdin, out, err], detached: true });
  // The agent holds its own copies; ours would keep the harness from seeing EOF.
  out.destroy();
  err.destroy();
  if (typeof stdin === 'number') fs.closeSync(stdin);
  const pass = (sig) => {
    try { process.kill(-child.pid, sig); } catch {}
  };
  process.on('SIGTERM', () => pass('SIGTERM'));
  process.on('SIGINT', () => pass('SIGINT'));
  child.on('error', (e) => {
    say('could not start /bin/sh: ' + e.message);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    if (signal) say('the agent was killed by ' + signal);
    process.exit(code === null ? 128 + (require('os').constants.signals[signal] || 0) : code);
  });
}
main().catch((e) => {
  say(e && e.message ? e.message : String(e));
  process.exit(125);
});
`;
