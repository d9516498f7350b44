// Host-side byte forwarders between Unix sockets and loopback TCP, for agents with no network but
// their own loopback (a bubblewrap sandbox's, a container's): they reach the gateway (and their
// database) only through sockets made here.
import { chmodSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';

/** Ties two sockets together; either end closing or failing closes the other. */
export function joinSockets(a: Socket, b: Socket): void {
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}

function listen(server: Server, target: string | { port: number; host: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const done = () => {
      server.off('error', reject);
      resolve();
    };
    if (typeof target === 'string') server.listen(target, done);
    else server.listen(target.port, target.host, done);
  });
}

/** A listening forwarder; close() stops accepting and drops its open connections. */
export interface Forwarder {
  close(): Promise<void>;
}

function track(server: Server, cleanup?: () => void): Forwarder {
  const open = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  });
  return {
    close: () =>
      new Promise((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => {
          cleanup?.();
          resolve();
        });
      }),
  };
}

// Connections a forward queues before its accept loop takes them: an agent's burst of tool calls
// (a full Unix socket backlog refuses them, unlike TCP's; the kernel caps it at somaxconn).
const FORWARD_BACKLOG = 4096;

/**
 * Serves `socketPath` (mode 0666, so the agent's unprivileged user may connect) and forwards every
 * connection to host:port on this machine. A Unix socket is bound by listen() itself: it accepts
 * from the moment this returns.
 */
export function unixForwardServer(socketPath: string, host: string, port: number): Server {
  const server = createServer((c) => joinSockets(c, connect(port, host)));
  server.listen({ path: socketPath, backlog: FORWARD_BACKLOG });
  chmodSync(socketPath, 0o666);
  return server;
}

/** unixForwardServer, once listening, with a close() that drops its open connections. */
export async function unixToTcp(socketPath: string, host: string, port: number): Promise<Forwarder> {
  const server = unixForwardServer(socketPath, host, port);
  if (!server.listening)
    await new Promise<void>((resolve, reject) => {
      server.once('listening', () => resolve());
      server.once('error', reject);
    });
  return track(server, () => rmSync(socketPath, { force: true }));
}

/** Listens on 127.0.0.1 (port 0: any free port) and forwards every connection to `socketPath()`. */
export async function tcpToUnix(socketPath: () => string, port = 0): Promise<Forwarder & { port: number }> {
  const server = createServer((c) => joinSockets(c, connect(socketPath())));
  await listen(server, { port, host: '127.0.0.1' });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  return { ...track(server), port: bound };
}

/** Whether a Unix socket accepts a connection now. */
export function socketAccepts(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(socketPath);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Serves `socketPath` for exactly the connections made to it, handing each to `onConnection`. */
export async function unixListener(
  socketPath: string,
  onConnection: (s: Socket) => void,
): Promise<Forwarder> {
  const server = createServer(onConnection);
  await listen(server, socketPath);
  chmodSync(socketPath, 0o666);
  return track(server, () => rmSync(socketPath, { force: true }));
}
