// The refund agent's scripted planner: the same steps every time for the same message, directives
// and tool replies, so any change in behaviour between versions comes from the manifest alone.
// It reaches the tools only through the injected transport (HTTP, MCP or anything else).

/**
 * @typedef {{ ok: true, status: number, result: any }
 *   | { ok: false, status: number, code: string, message: string, retryable: boolean, retryAfterMs: number | null }} CallOutcome
 * @typedef {{ listTools(): Promise<string[] | null>, call(name: string, args: object): Promise<CallOutcome> }} ToolTransport
 * @typedef {import('./manifest.mjs').Directives} Directives
 */

const ORDER_ID = /\bORD-[A-Z0-9]+(?:-[A-Z0-9]+)*\b/i;
const AMOUNT = /\$\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?/;
const REFUND_REASON = 'customer request';

/** Finds the first order id and the first dollar amount in a customer's message. */
export function parseRequest(message) {
  const order = ORDER_ID.exec(message);
  const amount = AMOUNT.exec(message);
  return {
    orderId: order ? order[0].toUpperCase() : null,
    amount: amount ? Number(`${amount[1].replaceAll(',', '')}.${amount[2] ?? '0'}`) : null,
  };
}

const money = (n) => `$${Number(n).toFixed(2)}`;

/** Runs one support conversation turn and returns the result object of the agent protocol. */
export async function planRefund({ message, context, directives, tools, sleep = defaultSleep }) {
  const steps = [];
  const call = async (name, args) => {
    const r = await tools.call(name, args);
    steps.push({ tool: name, args, status: r.status, ok: r.ok, ...(r.ok ? {} : { error: r.code }) });
    return r;
  };
  const wait = (ms) => sleep(Math.min(ms ?? 100, directives.max_wait_ms));
  // Reads are safe to repeat: retry them on transient failures, within the same budget as writes.
  const read = async (name, args) => {
    for (let attempt = 0; ; attempt++) {
      const r = await call(name, args);
      if (r.ok || !r.retryable || attempt >= directives.max_retries) return r;
      await wait(r.retryAfterMs);
    }
  };
  const finish = (outcome, reply) => ({ reply, outcome, tool_calls: steps, usage: usageFor(message, steps) });
  const escalate = async (customerId, orderId, reason, reply) => {
    const args = { customer_id: customerId, reason, ...(orderId ? { order_id: orderId } : {}) };
    const r = await call('escalate_to_human', args);
    if (r.ok) return finish('ESCALATED', reply);
    return finish(
      'FAILURE',
      'I could not complete this and could not reach a colleague either. Please contact support.',
    );
  };

  const customerId = typeof context?.customer_id === 'string' ? context.customer_id : null;
  if (!customerId)
    return finish('FAILURE', 'I need to know which customer account this is about before I can help.');
  const available = await tools.listTools();
  if (available && !['lookup_order', 'refund_payment'].every((t) => available.includes(t))) {
    return finish('FAILURE', 'Refunds are not available right now. Please try again later.');
  }

  const { orderId, amount } = parseRequest(message);
  if (!orderId) {
    return escalate(
      customerId,
      null,
      'Request without an order to refund; needs a human.',
      'I can only refund orders. I have passed your request to a colleague, who will get back to you.',
    );
  }
  if (amount === null || amount <= 0) {
    return finish('FAILURE', `How much of order ${orderId} should I refund? Please tell me the amount.`);
  }

  const found = await read('lookup_order', { order_id: orderId });
  if (!found.ok && found.status === 404) return finish('FAILURE', `I could not find order ${orderId}.`);
  if (!found.ok)
    return finish('FAILURE', `I could not look up order ${orderId} right now. Please try again later.`);
  const order = found.result;
  if (order.customer_id !== customerId)
    return finish('FAILURE', `I could not find order ${orderId} on your account.`);
  if (amount > Number(order.refundable_amount)) {
    return finish(
      'FAILURE',
      `At most ${money(order.refundable_amount)} of order ${orderId} can still be refunded.`,
    );
  }

  let limit = directives.builtin_max_auto_refund;
  if (directives.policy_lookup) {
    const policy = await read('get_refund_policy', { order_id: orderId });
    if (!policy.ok) {
      return escalate(
        customerId,
        orderId,
        `Refund of ${money(amount)} requested; the refund policy could not be read.`,
        'I could not check our refund policy, so I have passed your request to a colleague.',
      );
    }
    limit = Number(policy.result.max_auto_refund);
  }
  if (amount > limit) {
    return escalate(
      customerId,
      orderId,
      `Refund of ${money(amount)} exceeds the automatic limit of ${money(limit)}.`,
      `A refund of ${money(amount)} needs a colleague's approval. I have passed it on; you will hear from us shortly.`,
    );
  }

  const attempt = await refundWithRetries({ call, read, wait, directives, order, amount });
  let refunded = attempt.state === 'reported' || attempt.state === 'landed';
  if (attempt.state === 'rejected') {
    return finish('FAILURE', `The refund was declined: ${attempt.error.message || attempt.error.code}.`);
  }
  if (!refunded && !directives.verify_before_confirm) {
    return finish(
      'FAILURE',
      `I could not process the refund for ${orderId} right now. Please try again later.`,
    );
  }
  // Verify-before-confirm: only the order's own record can show that the money moved.
  if (directives.verify_before_confirm && attempt.state !== 'landed') {
    const now = await read('lookup_order', { order_id: orderId });
    refunded = now.ok && landed(order, now.result);
    if (!refunded) {
      return escalate(
        customerId,
        orderId,
        unconfirmedReason(attempt, amount, orderId, now.ok),
        `I could not confirm the refund of ${money(amount)} for ${orderId}, so I have passed it to a colleague who will check it and get back to you.`,
      );
    }
  }

  const reference = attempt.result?.refund_id ? ` (refund ${attempt.result.refund_id})` : '';
  const confirmation = `We have refunded ${money(amount)} for order ${orderId} to your original payment method${reference}.`;
  let note = '';
  if (directives.confirmation_email) {
    const sent = await call('send_email', {
      customer_id: customerId,
      subject: `Your refund for ${orderId}`,
      body: `${confirmation} It can take 5-10 business days to appear on your statement.`,
    });
    note = sent.ok ? ' A confirmation email is on its way.' : ' (The confirmation email could not be sent.)';
  }
  return finish('SUCCESS', `Done: I refunded ${money(amount)} for order ${orderId}${reference}.${note}`);
}

/** Calls refund_payment until it reports success, refuses for good, lands, or the budget runs out. */
async function refundWithRetries({ call, read, wait, directives, order, amount }) {
  const args = { order_id: order.id, amount, reason: REFUND_REASON };
  // Derived from the request alone, so every retry of this refund carries the same key.
  if (directives.idempotency_key) args.idempotency_key = `refund-${order.id}-${amount.toFixed(2)}`;
  for (let retries = 0; ; retries++) {
    const r = await call('refund_payment', args);
    if (r.ok) return { state: 'reported', result: r.result };
    if (!r.retryable) return { state: 'rejected', error: r };
    // Look-before-retry: a failed call may still have moved the money.
    if (directives.verify_before_retry && !directives.retry_without_lookup_on.includes(r.status)) {
      const now = await read('lookup_order', { order_id: order.id });
      if (!now.ok) return { state: 'unknown', error: r };
      if (landed(order, now.result)) return { state: 'landed', result: null };
    }
    if (retries >= directives.max_retries) return { state: 'gave-up', error: r };
    await wait(r.retryAfterMs);
  }
}

/** Says, for the colleague who takes over, why a refund could not be confirmed. */
function unconfirmedReason(attempt, amount, orderId, orderRead) {
  const what = `the refund of ${money(amount)} on ${orderId}`;
  if (!orderRead) return `Could not read ${orderId} to confirm ${what}; check whether it went through.`;
  if (attempt.state === 'reported')
    return `The payment provider reported ${what} as done, but the order shows no new refund.`;
  if (attempt.state === 'gave-up') {
    return `The payment provider kept failing (${attempt.error.code}); the order shows no new refund for ${what}.`;
  }
  return `A refund call failed (${attempt.error.code}) and the order could not be checked; ${what} may not have gone through.`;
}

/** Whether the order shows a refund it did not have before. */
function landed(before, now) {
  return Number(now.refund_count) > Number(before.refund_count);
}

/** Synthetic but deterministic usage: a fixed prompt, plus a fixed cost per step. */
function usageFor(message, steps) {
  const input = 900 + Math.ceil(message.length / 4) + 350 * steps.length;
  const output = 60 + 45 * (steps.length + 1);
  const cost = (input * 2.5 + output * 10) / 1_000_000;
  return { input_tokens: input, output_tokens: output, cost_usd: Math.round(cost * 1e6) / 1e6 };
}

function defaultSleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
