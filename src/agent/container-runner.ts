// The process that runs as PID 1 inside an agent container (`agent.isolation: container`). The
// container has no network at all; this script bridges the few addresses the agent may use:
// 127.0.0.1:PORT inside (gateway, exposed database) to Unix sockets the harness serves in a
// read-only mount, and, for agent.serve, the server's port back out through connections the runner
// opens to the harness on request. Then it runs the agent with /bin/sh -c, stdin from a file,
// stdout/stderr on sockets the harness reads.
// Shipped as text and written next to each container's spec, so the bundled action carries it too.

/** Where the runner and its spec are mounted inside the container (read-only). */
export const RUNNER_MOUNT = '/stategate/side';

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
   * agent.serve: the runner connects to `control` (served by the harness) and says "ready" once
   * 127.0.0.1:port accepts inside. For "open ID" it connects to port and to `data`, sends "ID\n" and
   * joins the two; for "forward PORT SOCKET" it adds a forward and answers "ok PORT". The container
   * needs no writable mount, and the harness never connects to a path the agent could replace.
   */
  tunnel?: { port: number; control: string; data: string };
}

// Plain CommonJS for any Node 18+ the image carries; no dependencies.
export const RUNNER_SOURCE = String.raw`'use strict';
const net = require('net');
const fs = require('fs');
const { spawn } = require('child_process');
const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const say = (m) => process.stderr.write('stategate-runner: ' + m + '\n');

function join(a, b) {
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}
function forward(port, socket) {
  return new Promise((resolve, reject) => {
    const server = net.createServer((c) => join(c, net.connect(socket)));
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
}
function connectUnix(path) {
  return new Promise((resolve, reject) => {
    const s = net.connect(path);
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}
function tunnel(t) {
  return connectUnix(t.control).then((ctl) => {
    const probe = () => {
      const p = net.connect(t.port, '127.0.0.1');
      p.once('connect', () => {
        p.destroy();
        ctl.write('ready\n');
      });
      p.once('error', () => setTimeout(probe, 50));
    };
    probe();
    let buf = '';
    ctl.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const [verb, a, b] = buf.slice(0, i).split(' ');
        buf = buf.slice(i + 1);
        if (verb === 'open') {
          const inner = net.connect(t.port, '127.0.0.1');
          inner.once('error', () => ctl.write('fail ' + a + '\n'));
          inner.once('connect', () => {
            const out = net.connect(t.data);
            out.once('connect', () => {
              out.write(a + '\n');
              join(inner, out);
            });
            out.once('error', () => inner.destroy());
          });
        } else if (verb === 'forward') {
          forward(Number(a), b).then(() => ctl.write('ok ' + a + '\n'), () => ctl.write('error ' + a + '\n'));
        }
      }
    });
    // The harness hung up: nothing more will be asked of this server.
    ctl.on('close', () => process.kill(process.pid, 'SIGTERM'));
    ctl.on('error', () => {});
  });
}

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
