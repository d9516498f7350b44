// A support-refund agent in TypeScript that takes its tools over MCP with the official SDK client,
// for Stategate's demo suite. Written from docs/agent-protocol.md alone: one JSON object on stdin,
// the tools at $STATEGATE_MCP_URL (streamable HTTP), one result line on stdout, logs on stderr.
// Run it under stategate: `agent: {command: node --import tsx examples/mcp-agent-ts/agent.mts}`.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

type Outcome = 'SUCCESS' | 'FAILURE' | 'PARTIAL' | 'ESCALATED';
/** The result line of the agent protocol. */
interface AgentResult {
  reply: string;
  outcome: Outcome;
}
/** One tool call as the agent sees it: a value, or the gateway's status and error code. */
type Call =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; status: number; code: string; retryAfterS: number | null };

const TRANSIENT = new Set([0, 408, 425, 429, 500, 502, 503, 504]);
const MAX_RETRIES = 2;
const MAX_WAIT_MS = 200;

const log = (text: string) => process.stderr.write(`mcp-agent-ts: ${text}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const money = (n: number) => `$${n.toFixed(2)}`;

/** Calls a tool; an isError result carries {status, code, retry_after} in structuredContent. */
async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Call> {
  try {
    const res = await client.callTool({ name, arguments: args });
    const structured = (res.structuredContent ?? {}) as Record<string, unknown>;
    if (res.isError) {
      const status = typeof structured.status === 'number' ? structured.status : 0;
      const retryAfterS = typeof structured.retry_after === 'number' ? structured.retry_after : null;
      return { ok: false, status, code: String(structured.code ?? 'TOOL_ERROR'), retryAfterS };
    }
    return { ok: true, value: (structured.result ?? {}) as Record<string, unknown> };
  } catch (err) {
    // A dropped connection or a broken body: whether the tool acted is unknown.
    log(`${name}: no reply (${(err as Error).message})`);
    return { ok: false, status: 0, code: 'CONNECTION_FAILED', retryAfterS: null };
  }
}

function parseRequest(message: string): { orderId: string | null; amount: number | null } {
  const order = /\bORD-[A-Z0-9]+(?:-[A-Z0-9]+)*\b/i.exec(message);
  const amount = /\$\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?/.exec(message);
  return {
    orderId: order ? order[0].toUpperCase() : null,
    amount: amount ? Number(`${amount[1].replaceAll(',', '')}.${amount[2] ?? '0'}`) : null,
  };
}

async function handle(client: Client, message: string, context: Record<string, unknown>): Promise<AgentResult> {
  const customer = typeof context.customer_id === 'string' ? context.customer_id : null;
  if (!customer)
    return { outcome: 'FAILURE', reply: 'I need to know which customer account this is about.' };
  const wait = (c: Call) => sleep(Math.min(!c.ok && c.retryAfterS !== null ? c.retryAfterS * 1000 : 100, MAX_WAIT_MS));
  const read = async (name: string, args: Record<string, unknown>): Promise<Call> => {
    for (let attempt = 0; ; attempt++) {
      const r = await call(client, name, args);
      if (r.ok || !TRANSIENT.has(r.status) || attempt >= MAX_RETRIES) return r;
      await wait(r);
    }
  };
  const escalate = async (orderId: string | null, reason: string, reply: string): Promise<AgentResult> => {
    const r = await call(client, 'escalate_to_human', {
      customer_id: customer,
      reason,
      ...(orderId ? { order_id: orderId } : {}),
    });
    return r.ok
      ? { outcome: 'ESCALATED', reply }
      : { outcome: 'FAILURE', reply: 'I could not complete this or reach a colleague. Please contact support.' };
  };

  const { orderId, amount } = parseRequest(message);
  if (!orderId)
    return escalate(null, 'Request without an order to refund; needs a human.', 'I have passed your request to a colleague.');
  if (amount === null || amount <= 0)
    return { outcome: 'FAILURE', reply: `How much of order ${orderId} should I refund?` };

  const found = await read('lookup_order', { order_id: orderId });
  if (!found.ok)
    return {
      outcome: 'FAILURE',
      reply: found.status === 404 ? `I could not find order ${orderId}.` : `I could not look up order ${orderId} right now.`,
    };
  const order = found.value;
  if (order.customer_id !== customer)
    return { outcome: 'FAILURE', reply: `I could not find order ${orderId} on your account.` };
  if (amount > Number(order.refundable_amount))
    return { outcome: 'FAILURE', reply: `That is more than can still be refunded on ${orderId}.` };

  const policy = await read('get_refund_policy', { order_id: orderId });
  if (!policy.ok)
    return escalate(orderId, `Refund of ${money(amount)}: the policy could not be read.`, 'A colleague will handle your refund.');
  const limit = Number(policy.value.max_auto_refund);
  if (amount > limit)
    return escalate(
      orderId,
      `Refund of ${money(amount)} exceeds the automatic limit of ${money(limit)}.`,
      `A refund of ${money(amount)} needs a colleague's approval; I have passed it on.`,
    );

  const landed = async () => {
    const now = await read('lookup_order', { order_id: orderId });
    return now.ok && Number(now.value.refund_count) > Number(order.refund_count);
  };
  // The same key on every attempt: a retry of a refund that did land is answered, not applied again.
  const args = {
    order_id: orderId,
    amount,
    reason: 'customer request',
    idempotency_key: `refund-${orderId}-${amount.toFixed(2)}`,
  };
  let reported = false;
  let confirmed = false;
  for (let attempt = 0; attempt <= MAX_RETRIES; attempt++) {
    const r = await call(client, 'refund_payment', args);
    if (r.ok) {
      reported = true;
      break;
    }
    if (!TRANSIENT.has(r.status)) return { outcome: 'FAILURE', reply: `The refund was declined (${r.code}).` };
    // A failed call may still have moved the money: look before trying again.
    if (await landed()) {
      confirmed = true;
      break;
    }
    if (attempt < MAX_RETRIES) await wait(r);
  }
  // Only the order's own record shows that the money moved: check it before claiming SUCCESS.
  if (!confirmed && !(await landed()))
    return escalate(
      orderId,
      reported
        ? `The provider reported the refund of ${money(amount)} on ${orderId} as done, but the order shows none.`
        : `The refund of ${money(amount)} on ${orderId} kept failing.`,
      `I could not confirm the refund for ${orderId}; a colleague will check it and get back to you.`,
    );

  const done = `We have refunded ${money(amount)} for order ${orderId} to your original payment method.`;
  const sent = await call(client, 'send_email', {
    customer_id: customer,
    subject: `Your refund for ${orderId}`,
    body: `${done} It can take 5-10 business days to appear.`,
  });
  return {
    outcome: 'SUCCESS',
    reply: `Done: I refunded ${money(amount)} for order ${orderId}.${sent.ok ? ' A confirmation email is on its way.' : ''}`,
  };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const mcpUrl = process.env.STATEGATE_MCP_URL;
if (!mcpUrl) {
  log('STATEGATE_MCP_URL is not set: run this agent under stategate');
  process.exit(1);
}
const episode = JSON.parse(await readStdin()) as { message: string; context?: Record<string, unknown> };
const client = new Client({ name: 'mcp-agent-ts', version: '1.0.0' });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  const result = await handle(client, episode.message, episode.context ?? {});
  // The last line of stdout is the result.
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (err) {
  log((err as Error).message);
  process.exitCode = 1;
} finally {
  await client.close().catch(() => undefined);
}
