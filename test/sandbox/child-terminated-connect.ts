// A connection whose backend is terminated as it starts, with the server's ReadyForQuery and its
// FATAL "terminating connection due to administrator command" arriving in one read, as on a busy
// machine while a run's databases are force-dropped. A proxy in front of the real server holds the
// ReadyForQuery until the backend is terminated, then passes both on in one write.
// Usage: node --import tsx test/sandbox/child-terminated-connect.ts
// Prints one JSON line ({ queryError }) and exits 0 when the process survives.
import { createServer, connect as tcpConnect } from 'node:net';
import pg from 'pg';
import { ConnectionBudget } from '../../src/sandbox/connections.js';
import { sandboxPool } from '../../src/sandbox/sandbox.js';

const adminUrl = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const target = new URL(adminUrl);

/** The server's messages, split: type byte, then a length that counts itself. */
function* messages(buf: Buffer): Generator<{ type: string; start: number; end: number }> {
  let at = 0;
  while (at + 5 <= buf.length) {
    const end = at + 1 + buf.readInt32BE(at + 1);
    if (end > buf.length) return;
    yield { type: String.fromCharCode(buf[at]), start: at, end };
    at = end;
  }
}

const proxy = createServer((client) => {
  const server = tcpConnect({ host: target.hostname, port: Number(target.port || 5432) });
  client.pipe(server);
  let pending = Buffer.alloc(0);
  let held: Buffer | null = null;
  let pid = 0;
  server.on('data', (chunk: Buffer) => {
    if (held) {
      held = Buffer.concat([held, chunk]);
      return;
    }
    pending = Buffer.concat([pending, chunk]);
    let passed = 0;
    for (const m of messages(pending)) {
      if (m.type === 'K') pid = pending.readInt32BE(m.start + 5);
      if (m.type === 'Z') {
        client.write(pending.subarray(0, m.start));
        held = pending.subarray(m.start);
        void terminate(pid);
        return;
      }
      passed = m.end;
    }
    client.write(pending.subarray(0, passed));
    pending = pending.subarray(passed);
  });
  // The backend is gone: its ReadyForQuery and its FATAL reach the client together.
  server.on('end', () => {
    if (held) client.end(held);
    else client.end();
  });
  server.on('error', () => client.destroy());
  client.on('error', () => server.destroy());
});

async function terminate(pid: number): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  admin.on('error', () => undefined);
  await admin.connect();
  await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  await admin.end();
}

await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
const address = proxy.address();
if (!address || typeof address === 'string') throw new Error('the proxy has no port');
const url = new URL(adminUrl);
url.hostname = '127.0.0.1';
url.port = String(address.port);

const pool = sandboxPool(url.toString(), 1, new ConnectionBudget(4));
let queryError: string | null = null;
try {
  await pool.query('SELECT 1');
} catch (e) {
  queryError = (e as Error).message;
}
// Whatever the error event would do, it has done by now.
await new Promise((r) => setTimeout(r, 200));
await pool.end().catch(() => undefined);
proxy.close();
process.stdout.write(`${JSON.stringify({ queryError })}\n`);
