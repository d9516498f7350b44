// The first process of the agent inside a bubblewrap sandbox (sandbox.ts), after the privilege
// drop. The sandbox has its own network namespace with only a loopback: this script listens on
// 127.0.0.1:PORT inside for each address the agent may use (the gateway; with database.expose, its
// database) and carries each connection to a Unix socket the harness serves in a read-only mount.
// Then it runs the agent with /bin/sh -c in its own process group, with the environment from the
// spec (never from the command line, which every user of the machine can read), and exits with it:
// bubblewrap's PID 1 then exits and the kernel kills whatever the agent left in the namespace.
// For agent.serve it also carries the server's port out to the harness and adds a forward for each
// episode's gateway and database on request (the tunnel of runner-forward.ts, as in a container).
// Shipped as text and written into each side's socket directory, so the bundled action carries it.
import type { RunnerTunnel } from './container-runner.js';
import { RUNNER_FORWARD_SOURCE } from './runner-forward.js';

/** Where the side's socket directory (runner, forward sockets) is mounted inside, read-only. */
export const SANDBOX_SIDE_MOUNT = '/stategate/side';
/** Where one command's own directory (its spec) is mounted inside, read-only. */
export const SANDBOX_CALL_MOUNT = '/stategate/call';

/** What the runner does, read from the JSON file whose path is its only argument. */
export interface SandboxRunnerSpec {
  command: string;
  cwd: string;
  env: Record<string, string>;
  /** Created (mode 0700) when absent: the side's private HOME, kept between its commands. */
  home?: string;
  /** 127.0.0.1:port inside, forwarded to a Unix socket the harness serves. */
  forwards: { port: number; socket: string }[];
  /**
   * A Unix socket the harness serves for as long as it lives: when the connection closes (the
   * harness died, even by SIGKILL, also through sudo, which drops a parent-death signal), the
   * runner kills the agent's group and exits, and the namespace goes with it.
   */
  lifeline?: string;
  /**
   * A Unix socket of this command only: each line is a signal name to pass to the agent's group
   * (the harness cannot signal the agent's uid itself when the sandbox runs through sudo).
   */
  control?: string;
  /** agent.serve: the server's port inside, carried out through the harness's two sockets. */
  tunnel?: RunnerTunnel;
}

// Plain CommonJS for the harness's own Node, mounted read-only; no dependencies.
export const SANDBOX_RUNNER_SOURCE = String.raw`'use strict';
const net = require('net');
const fs = require('fs');
const { spawn } = require('child_process');
const say = (m) => process.stderr.write('stategate-sandbox: ' + m + '\n');

${RUNNER_FORWARD_SOURCE}
function lifeline(path, onLost) {
  return new Promise((resolve, reject) => {
    const s = net.connect(path);
    s.once('connect', () => {
      s.on('close', onLost);
      resolve();
    });
    s.once('error', reject);
    s.on('data', () => {});
  });
}

// Started ahead (a second argument: a socket the harness serves): the sandbox is up before its
// episode is known; the spec is written, and read here, only once the harness says go. A closed
// connection before that means the sandbox is not needed.
function go(path) {
  return connectUnix(path).then((s) => new Promise((resolve) => {
    const unneeded = () => process.exit(0);
    s.on('error', () => {});
    s.on('close', unneeded);
    s.on('data', (d) => {
      if (!String(d).includes('\n')) return;
      s.off('close', unneeded);
      s.destroy();
      resolve();
    });
  }));
}

let spec;
async function main() {
  if (process.argv[3]) await go(process.argv[3]);
  spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  if (spec.home) fs.mkdirSync(spec.home, { recursive: true, mode: 0o700 });
  let child;
  const pass = (sig) => {
    try { process.kill(-child.pid, sig); } catch {}
  };
  // The setup steps do not depend on one another, so they run at once (each is a round trip to
  // the kernel or the harness); the agent starts only after all of them: every forward listening,
  // and the lifeline, control and tunnel connections made, so the harness (which takes only the
  // first connection of each) surely talks to the runner, never to the agent. One that fails
  // exits the runner (main's catch) before any agent starts.
  const ready = spec.forwards.map((f) => forward(f.port, f.socket));
  if (spec.lifeline) ready.push(lifeline(spec.lifeline, () => { if (child) pass('SIGKILL'); process.exit(137); }));
  if (spec.control) {
    ready.push(connectUnix(spec.control).then((ctl) => {
      ctl.on('error', () => {});
      let buf = '';
      ctl.on('data', (d) => {
        buf += d;
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          const sig = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (/^SIG[A-Z0-9]+$/.test(sig)) { if (child) pass(sig); else process.exit(128); }
        }
      });
    }));
  }
  if (spec.tunnel) ready.push(tunnel(spec.tunnel));
  await Promise.all(ready);
  child = spawn('/bin/sh', ['-c', spec.command], {
    cwd: spec.cwd,
    env: spec.env,
    stdio: 'inherit',
    detached: true,
  });
  process.on('SIGTERM', () => pass('SIGTERM'));
  process.on('SIGINT', () => pass('SIGINT'));
  process.on('SIGHUP', () => pass('SIGHUP'));
  child.on('error', (e) => {
    say('could not start /bin/sh: ' + e.message);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    process.exit(code === null ? 128 + (require('os').constants.signals[signal] || 0) : code);
  });
}
main().catch((e) => {
  say(e && e.message ? e.message : String(e));
  process.exit(125);
});
`;
