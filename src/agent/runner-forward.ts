// The forwarding half of the two runners an agent starts under (sandbox-runner.ts inside bubblewrap,
// container-runner.ts inside a container), shared as JavaScript text: both run where the only network
// is a loopback of their own, and both reach the harness only through Unix sockets it serves.
//   join(a, b)         ties two sockets together; either end closing or failing closes the other
//   forward(port, s)   listens on 127.0.0.1:port and carries each connection to the Unix socket s
//   connectUnix(path)  resolves with a connected socket
//   tunnel(t)          agent.serve's way out: connects to t.control (served by the harness) and says
//                      "ready" once 127.0.0.1:t.port accepts; for "open ID" it connects to the port
//                      and to t.data, sends "ID\n" and joins the two; for "forward PORT SOCKET" it
//                      adds a forward and answers "ok PORT" (or "error PORT"). When the harness hangs
//                      up, the runner gets SIGTERM, which it passes on to the server.
// The harness never connects to a path the agent could replace: every socket is the harness's.

// Plain CommonJS for any Node 18+; no dependencies. Expects `net` in scope.
export const RUNNER_FORWARD_SOURCE = String.raw`
function join(a, b) {
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}
// Connections queued before the accept loop takes them: an agent's burst of tool calls (the kernel
// caps it at somaxconn).
function forward(port, socket) {
  return new Promise((resolve, reject) => {
    const server = net.createServer((c) => join(c, net.connect(socket)));
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', backlog: 4096 }, () => resolve());
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
    ctl.on('close', () => process.kill(process.pid, 'SIGTERM'));
    ctl.on('error', () => {});
  });
}
`;
