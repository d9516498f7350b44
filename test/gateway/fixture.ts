// A small shop for gateway tests: a real Postgres template (orders, refunds, notes), twin tools over
// it, and a helper that opens one episode on a fresh sandbox clone behind a real gateway.
import { randomBytes } from 'node:crypto';
import type { FaultRule, Tool } from '../../src/config/schema.js';
import { FaultRule as FaultRuleSchema, TwinTool } from '../../src/config/schema.js';
import { createGateway } from '../../src/gateway/index.js';
import type { EpisodeSession, Gateway, SessionSpec } from '../../src/gateway/types.js';
import { createPostgresEngine } from '../../src/sandbox/index.js';
import type { Engine, Sandbox, Template } from '../../src/sandbox/types.js';

export const ADMIN_URL =
  process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const SCHEMA = `
CREATE TABLE orders (
  id text PRIMARY KEY,
  total numeric(10,2) NOT NULL,
  refunded_amount numeric(10,2) NOT NULL DEFAULT 0,
  refund_count integer NOT NULL DEFAULT 0,
  CHECK (refunded_amount <= total)
);
CREATE TABLE refunds (
  id serial PRIMARY KEY,
  order_id text NOT NULL REFERENCES orders (id),
  amount numeric(10,2) NOT NULL
);
CREATE TABLE notes (
  id serial PRIMARY KEY,
  body text NOT NULL UNIQUE
);
`;

const FIXTURES = `INSERT INTO orders (id, total) VALUES ('ORD-1', 120), ('ORD-2', 50);`;

/** Parses a twin tool the way the config loader does (defaults applied). */
export function tool(name: string, def: Record<string, unknown>): Tool {
  return { ...TwinTool.parse(def), name, file: 'twins/shop.yaml' };
}

/** Parses a fault rule the way the scenario loader does. */
export function rule(def: Record<string, unknown>): FaultRule {
  return FaultRuleSchema.parse(def);
}

export const TOOLS = {
  lookup_order: tool('lookup_order', {
    description: 'Look up an order by id.',
    risk: 'read',
    input: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
    sql: 'SELECT id, total, refunded_amount, refund_count FROM orders WHERE id = :order_id',
    returns: 'one',
    not_found: { status: 404, code: 'ORDER_NOT_FOUND', message: 'No order {order_id}' },
  }),
  list_orders: tool('list_orders', {
    description: 'Every order, by id.',
    sql: 'SELECT id, refund_count FROM orders ORDER BY id',
    returns: 'many',
  }),
  refund: tool('refund', {
    description: 'Refund part of an order.',
    risk: 'write_irreversible',
    input: {
      type: 'object',
      properties: {
        order_id: { type: 'string' },
        amount: { type: 'number', exclusiveMinimum: 0 },
        idempotency_key: { type: 'string' },
      },
      required: ['order_id', 'amount'],
      additionalProperties: false,
    },
    idempotency_key: 'idempotency_key',
    effect_key: 'refund:{order_id}',
    preconditions: [
      {
        query: 'SELECT count(*) FROM orders WHERE id = :order_id',
        error: { status: 404, code: 'ORDER_NOT_FOUND', message: 'No order {order_id}' },
      },
      {
        query: 'SELECT total - refunded_amount >= :amount FROM orders WHERE id = :order_id',
        error: { status: 422, code: 'AMOUNT_EXCEEDS_ORDER', message: 'Cannot refund {amount} on {order_id}' },
      },
    ],
    sql: `UPDATE orders SET refunded_amount = refunded_amount + :amount, refund_count = refund_count + 1
            WHERE id = :order_id;
          INSERT INTO refunds (order_id, amount) VALUES (:order_id, :amount) RETURNING id AS refund_id, amount`,
    returns: 'one',
  }),
  add_note: tool('add_note', {
    description: 'Adds a note; bodies are unique.',
    risk: 'write',
    input: { type: 'object', properties: { body: { type: 'string' } }, required: ['body'] },
    sql: 'INSERT INTO notes (body) VALUES (:body)',
    returns: 'none',
  }),
  get_policy: tool('get_policy', {
    description: 'The refund policy.',
    static: { max_auto_refund: 100 },
  }),
  wipe_orders: tool('wipe_orders', {
    description: 'Not allowed in any scenario here.',
    risk: 'write',
    sql: 'DELETE FROM orders',
    returns: 'none',
  }),
} satisfies Record<string, Tool>;

/** Tools a scenario allows in these tests (wipe_orders is in the suite but never allowed). */
export const ALLOWED: Tool[] = [
  TOOLS.lookup_order,
  TOOLS.list_orders,
  TOOLS.refund,
  TOOLS.add_note,
  TOOLS.get_policy,
];
export const SUITE: Tool[] = [...ALLOWED, TOOLS.wipe_orders];

/** One engine, template and gateway for a test file. */
export interface Shop {
  engine: Engine;
  template: Template;
  gateway: Gateway;
  /** Opens an episode on a fresh clone; `initialState: true` adds a second clone as the initial state. */
  episode(
    opts?: Partial<Omit<SessionSpec, 'sandbox' | 'initialState'>> & { initialState?: boolean },
  ): Promise<Episode>;
  close(): Promise<void>;
}

export interface Episode {
  session: EpisodeSession;
  sandbox: Sandbox;
  /** The initial-state clone, when asked for. */
  initial?: Sandbox;
  /** POSTs JSON (or a raw string) to a tool and returns status, headers and the body text. */
  post(tool: string, body: unknown): Promise<{ status: number; headers: Headers; text: string; json: any }>;
  /** Reads one scalar from the sandbox. */
  scalar(sql: string, params?: unknown[]): Promise<unknown>;
}

/** Starts a real engine on the test server, builds the shop template and a gateway. */
export async function openShop(): Promise<Shop> {
  const engine = await createPostgresEngine({ adminUrl: ADMIN_URL });
  const template = await engine.buildTemplate({
    schema: [{ file: 'db/schema.sql', sql: SCHEMA }],
    fixtures: [{ file: 'db/fixtures.sql', sql: FIXTURES }],
  });
  const gateway = await createGateway();
  const sandboxes: Sandbox[] = [];
  const clone = async (label: string) => {
    const sandbox = await template.clone(label);
    sandboxes.push(sandbox);
    return sandbox;
  };
  return {
    engine,
    template,
    gateway,
    async episode(opts = {}) {
      const label = randomBytes(3).toString('hex');
      const sandbox = await clone(`gw-${label}`);
      const initialState = opts.initialState ? await clone(`gw-${label}-initial`) : undefined;
      const session = gateway.open({
        episode: `ep-${label}`,
        scenario: 'shop',
        side: 'head',
        seed: 7,
        tools: ALLOWED,
        suiteTools: SUITE,
        faults: [],
        ...opts,
        sandbox,
        initialState,
      });
      return {
        session,
        sandbox,
        initial: initialState,
        post: (name, body) => post(`${session.toolsUrl}/tools/${name}`, body),
        scalar: async (sql, params) => {
          const { rows } = await sandbox.query(sql, params);
          return rows[0] ? Object.values(rows[0])[0] : undefined;
        },
      };
    },
    async close() {
      await gateway.close();
      await Promise.allSettled(sandboxes.map((s) => s.dispose()));
      await engine.close();
    },
  };
}

/** POSTs a JSON body (a string is sent as is) and reads the reply as text, then as JSON when it parses. */
export async function post(url: string, body: unknown) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Numbers from the driver (numeric may come back as a string) as numbers. */
export function num(v: unknown): number {
  return Number(v);
}
