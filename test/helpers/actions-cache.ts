// A loopback Actions cache service (v2, the one github.com runs) for tests: the twirp JSON endpoints
// @actions/cache calls (GetCacheEntryDownloadURL, CreateCacheEntry, FinalizeCacheEntryUpload) and the
// subset of the Azure Blob REST API its signed URLs are used with (Put Blob, Put Block, Put Block
// List for the upload by the storage SDK; a plain GET for the download). It checks what it receives
// (the bearer token, the fields, the version and key formats, the URL signature) and answers anything
// else with a 4xx, so a client call it does not expect fails the test. Entries live in memory.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const SERVICE = '/twirp/github.actions.results.api.v1.CacheService/';
/** The storage account and container in the blob URLs (an IP host puts the account in the path). */
const BLOB_PREFIX = '/devstoreaccount1/actions-cache/';

export interface CacheEntry {
  id: number;
  key: string;
  version: string;
  /** The archive as uploaded; null until the upload is finalized. */
  archive: Buffer | null;
  /** Bytes the client said it uploaded when finalizing. */
  sizeBytes: number | null;
  createdAt: number;
}

/** One request the service received, in order. */
export interface CacheRequest {
  method: string;
  /** The twirp method name, or `blob:<operation>` for the storage calls. */
  call: string;
  status: number;
  key?: string;
}

export interface ActionsCacheService {
  url: string;
  token: string;
  /** The environment a step needs to use this service (cache service v2). */
  env: Record<string, string>;
  entries: CacheEntry[];
  requests: CacheRequest[];
  /** Requests refused (4xx/5xx) with why: a correct client run leaves this empty. */
  refusals: string[];
  close(): Promise<void>;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const HEX64 = /^[0-9a-f]{64}$/;

function checkKey(field: string, key: unknown): string {
  if (typeof key !== 'string' || key.length === 0)
    throw new Refusal(400, `${field}: expected a non-empty string`);
  if (key.length > 512) throw new Refusal(400, `${field}: longer than 512 characters`);
  if (key.includes(',')) throw new Refusal(400, `${field}: contains a comma`);
  return key;
}

function checkVersion(version: unknown): string {
  if (typeof version !== 'string' || !HEX64.test(version))
    throw new Refusal(400, `version: expected 64 lowercase hex digits, got ${JSON.stringify(version)}`);
  return version;
}

function onlyFields(body: Record<string, unknown>, allowed: string[]): void {
  for (const name of Object.keys(body))
    if (!allowed.includes(name))
      throw new Refusal(400, `unknown field ${name} (expected ${allowed.join(', ')})`);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Starts the service on 127.0.0.1 (an ephemeral port). */
export async function startActionsCache(): Promise<ActionsCacheService> {
  const token = randomBytes(16).toString('hex');
  const secret = randomBytes(32);
  const entries: CacheEntry[] = [];
  const requests: CacheRequest[] = [];
  const refusals: string[] = [];
  /** Blocks staged by Put Block, per entry id. */
  const staged = new Map<number, Map<string, Buffer>>();
  let nextId = 1;
  let base = '';

  const sign = (id: number, op: 'read' | 'write') =>
    createHmac('sha256', secret).update(`${op}:${id}`).digest('hex');
  const blobUrl = (id: number, op: 'read' | 'write') =>
    `${base}${BLOB_PREFIX}entry-${id}?sp=${op}&sig=${sign(id, op)}`;

  function twirp(method: string, body: Record<string, unknown>): Record<string, unknown> {
    switch (method) {
      case 'GetCacheEntryDownloadURL': {
        onlyFields(body, ['metadata', 'key', 'restore_keys', 'version']);
        const key = checkKey('key', body.key);
        const restoreKeys = body.restore_keys ?? [];
        if (!Array.isArray(restoreKeys)) throw new Refusal(400, 'restore_keys: expected an array');
        for (const [i, k] of restoreKeys.entries()) checkKey(`restore_keys[${i}]`, k);
        const version = checkVersion(body.version);
        const ready = entries.filter((e) => e.archive && e.version === version);
        // As the service does: the exact key first, then each restore key as a prefix, newest first.
        const exact = ready.find((e) => e.key === key);
        const byPrefix = (restoreKeys as string[])
          .map((p) => ready.filter((e) => e.key.startsWith(p)).sort((a, b) => b.id - a.id)[0])
          .find(Boolean);
        const hit = exact ?? byPrefix;
        if (!hit) return { ok: false };
        return { ok: true, signed_download_url: blobUrl(hit.id, 'read'), matched_key: hit.key };
      }
      case 'CreateCacheEntry': {
        onlyFields(body, ['metadata', 'key', 'version']);
        const key = checkKey('key', body.key);
        const version = checkVersion(body.version);
        // Entries are immutable: a second entry under the same key and version is refused.
        if (entries.some((e) => e.key === key && e.version === version))
          return { ok: false, message: `an entry ${key} already exists` };
        const entry: CacheEntry = {
          id: nextId++,
          key,
          version,
          archive: null,
          sizeBytes: null,
          createdAt: Date.now(),
        };
        entries.push(entry);
        return { ok: true, signed_upload_url: blobUrl(entry.id, 'write') };
      }
      case 'FinalizeCacheEntryUpload': {
        onlyFields(body, ['metadata', 'key', 'size_bytes', 'version']);
        const key = checkKey('key', body.key);
        const version = checkVersion(body.version);
        const size = Number(body.size_bytes);
        if (typeof body.size_bytes !== 'string' || !Number.isSafeInteger(size) || size <= 0)
          throw new Refusal(
            400,
            `size_bytes: expected a positive integer string, got ${JSON.stringify(body.size_bytes)}`,
          );
        const entry = entries.find((e) => e.key === key && e.version === version && !e.archive);
        if (!entry) return { ok: false, message: `no entry ${key} is being uploaded` };
        const blocks = staged.get(entry.id);
        const uploaded = blocks?.get('\0committed');
        if (!uploaded) throw new Refusal(409, `${key}: finalized before anything was uploaded`);
        if (uploaded.length !== size)
          throw new Refusal(400, `size_bytes: ${size}, but ${uploaded.length} bytes were uploaded`);
        entry.archive = uploaded;
        entry.sizeBytes = size;
        staged.delete(entry.id);
        return { ok: true, entry_id: String(entry.id) };
      }
      default:
        throw new Refusal(404, `no twirp method ${method}`);
    }
  }

  function blob(req: IncomingMessage, url: URL, body: Buffer, res: ServerResponse): string {
    const id = Number(/^entry-(\d+)$/.exec(url.pathname.slice(BLOB_PREFIX.length))?.[1]);
    const entry = entries.find((e) => e.id === id);
    if (!entry) throw new Refusal(404, `no blob ${url.pathname}`);
    const op = url.searchParams.get('sp');
    const sig = Buffer.from(url.searchParams.get('sig') ?? '', 'hex');
    const want = Buffer.from(sign(id, op === 'write' ? 'write' : 'read'), 'hex');
    if ((op !== 'read' && op !== 'write') || sig.length !== want.length || !timingSafeEqual(sig, want))
      throw new Refusal(403, `${url.pathname}: bad signature`);
    const comp = url.searchParams.get('comp');
    const headers = { 'x-ms-request-id': randomBytes(8).toString('hex'), 'x-ms-version': '2025-01-05' };
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (op !== 'read') throw new Refusal(403, `${url.pathname}: a write URL cannot read`);
      if (comp) throw new Refusal(400, `GET with comp=${comp} is not supported`);
      if (!entry.archive) throw new Refusal(404, `${entry.key} is not finalized`);
      res.writeHead(200, {
        ...headers,
        'content-type': 'application/octet-stream',
        'content-length': entry.archive.length,
        'x-ms-blob-type': 'BlockBlob',
      });
      res.end(req.method === 'GET' ? entry.archive : undefined);
      return `blob:${req.method.toLowerCase()}`;
    }
    if (req.method !== 'PUT') throw new Refusal(405, `${req.method} ${url.pathname}`);
    if (op !== 'write') throw new Refusal(403, `${url.pathname}: a read URL cannot write`);
    if (entry.archive) throw new Refusal(409, `${entry.key} is already finalized`);
    const length = Number(req.headers['content-length']);
    if (req.headers['content-length'] === undefined || length !== body.length)
      throw new Refusal(
        400,
        `Content-Length ${req.headers['content-length']} does not match ${body.length} bytes`,
      );
    const blocks = staged.get(id) ?? new Map<string, Buffer>();
    staged.set(id, blocks);
    let call: string;
    if (!comp) {
      if (req.headers['x-ms-blob-type'] !== 'BlockBlob')
        throw new Refusal(400, `x-ms-blob-type: expected BlockBlob, got ${req.headers['x-ms-blob-type']}`);
      blocks.set('\0committed', body);
      call = 'blob:put';
    } else if (comp === 'block') {
      const blockId = url.searchParams.get('blockid');
      if (!blockId) throw new Refusal(400, 'Put Block without blockid');
      blocks.set(blockId, body);
      call = 'blob:put-block';
    } else if (comp === 'blocklist') {
      const ids = [...body.toString('utf8').matchAll(/<(?:Latest|Uncommitted|Committed)>([^<]*)<\//g)].map(
        (m) => m[1],
      );
      if (ids.length === 0) throw new Refusal(400, 'Put Block List names no block');
      const parts = ids.map((b) => {
        const part = blocks.get(b);
        if (!part) throw new Refusal(400, `Put Block List names the unknown block ${b}`);
        return part;
      });
      blocks.set('\0committed', Buffer.concat(parts));
      call = 'blob:put-block-list';
    } else throw new Refusal(400, `PUT with comp=${comp} is not supported`);
    res.writeHead(201, {
      ...headers,
      etag: `"0x${randomBytes(8).toString('hex').toUpperCase()}"`,
      'last-modified': new Date().toUTCString(),
      'x-ms-request-server-encrypted': 'true',
      'content-length': 0,
    });
    res.end();
    return call;
  }

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', base);
    const record: CacheRequest = { method: req.method ?? '', call: url.pathname, status: 0 };
    requests.push(record);
    try {
      const body = await readBody(req);
      if (url.pathname.startsWith(SERVICE)) {
        record.call = url.pathname.slice(SERVICE.length);
        if (req.method !== 'POST') throw new Refusal(405, `${req.method} ${url.pathname}`);
        if (req.headers.authorization !== `Bearer ${token}`)
          throw new Refusal(401, `${record.call}: missing or wrong bearer token`);
        if (!String(req.headers['content-type']).startsWith('application/json'))
          throw new Refusal(415, `${record.call}: content-type ${req.headers['content-type']}`);
        let parsed: unknown;
        try {
          parsed = JSON.parse(body.toString('utf8'));
        } catch {
          throw new Refusal(400, `${record.call}: the body is not JSON`);
        }
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
          throw new Refusal(400, `${record.call}: the body is not a JSON object`);
        record.key = (parsed as { key?: string }).key;
        const answer = twirp(record.call, parsed as Record<string, unknown>);
        record.status = 200;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer));
      } else if (url.pathname.startsWith(BLOB_PREFIX)) {
        record.call = blob(req, url, body, res);
        record.status = res.statusCode;
      } else throw new Refusal(404, `no route ${req.method} ${url.pathname}`);
    } catch (err) {
      const status = err instanceof Refusal ? err.status : 500;
      record.status = status;
      refusals.push(`${req.method} ${url.pathname}: ${(err as Error).message}`);
      if (!res.headersSent) {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            code: status === 404 ? 'bad_route' : 'invalid_argument',
            msg: (err as Error).message,
          }),
        );
      } else res.end();
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/`,
    token,
    env: { ACTIONS_CACHE_SERVICE_V2: 'true', ACTIONS_RESULTS_URL: `${base}/`, ACTIONS_RUNTIME_TOKEN: token },
    entries,
    requests,
    refusals,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
