// The agents `stategate init` writes, one per language, that pass the scaffold's two scenarios:
// they look the order up, refund with one idempotency key on every attempt, and claim SUCCESS only
// on the tool's success. Both use their language's standard library only, so nothing is installed
// or downloaded when they run. The texts are String.raw (regular expressions keep their
// backslashes) and hold no "${": each is the file as it is written.

/** Python 3.8 or later, standard library only. */
export const PYTHON_AGENT = String.raw`#!/usr/bin/env python3
"""A support agent that refunds part of an order: the starting point Stategate's scaffold gives you.

It speaks the agent protocol: one JSON object on stdin ({"message", "context"}), its tools over
HTTP at $STATEGATE_TOOLS_URL, and one JSON result line as the last line of stdout. Logs go to
stderr. Replace handle() with your agent (an LLM loop, a framework) and keep main()'s protocol.
"""
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

TRANSIENT = {0, 429, 500, 502, 503, 504}
ATTEMPTS = 3


def log(*parts):
    print("agent:", *parts, file=sys.stderr, flush=True)


def call(name, args):
    """POST $STATEGATE_TOOLS_URL/tools/NAME; returns (status, result or error dict). Status 0: no reply."""
    request = urllib.request.Request(
        os.environ["STATEGATE_TOOLS_URL"].rstrip("/") + "/tools/" + name,
        data=json.dumps(args).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as res:
            status, body = res.status, res.read()
    except urllib.error.HTTPError as err:
        status, body = err.code, err.read()
    except Exception as err:  # a dropped connection or a timeout: nothing is known
        log(name, "no reply:", err)
        return 0, {"code": "NO_REPLY", "message": str(err)}
    try:
        parsed = json.loads(body)
    except ValueError:
        return 0, {"code": "INVALID_RESPONSE", "message": "unparsable reply"}
    if 200 <= status < 300:
        return status, parsed.get("result")
    return status, parsed.get("error") or {"code": "HTTP_%d" % status, "message": ""}


def money(amount):
    return "$%.2f" % amount


def handle(message, context):
    """One support request; returns (outcome, reply)."""
    order = re.search(r"\bORD-\d+\b", message)
    amount = re.search(r"\$(\d+(?:\.\d{1,2})?)", message)
    if not order or not amount:
        return "FAILURE", "Which order, and how much of it should I refund?"
    order_id, amount = order.group(0), float(amount.group(1))

    status, found = call("lookup_order", {"order_id": order_id})
    if status == 404 or (status == 200 and found["customer_id"] != context.get("customer_id")):
        return "FAILURE", "I could not find order %s on your account." % order_id
    if status != 200:
        return "FAILURE", "I could not look up order %s right now." % order_id
    left = float(found["total"]) - float(found["refunded"])
    if amount > left:
        return "FAILURE", "At most %s of %s can still be refunded." % (money(left), order_id)

    # The same key on every attempt: a retry after a timeout replays the refund that landed
    # instead of refunding again.
    key = "refund-%s-%.2f" % (order_id, amount)
    args = {"order_id": order_id, "amount": amount, "idempotency_key": key}
    for attempt in range(ATTEMPTS):
        status, result = call("refund_order", args)
        if status == 200:
            return "SUCCESS", "Done: I refunded %s for order %s." % (money(amount), order_id)
        if status not in TRANSIENT:
            return "FAILURE", "The refund was declined: %s." % (result.get("message") or result.get("code"))
        log("refund_order failed with", status, "- attempt", attempt + 1, "of", ATTEMPTS)
        time.sleep(0.1)
    return "FAILURE", "The payment provider did not answer; please try again later."


def main():
    if not os.environ.get("STATEGATE_TOOLS_URL"):
        log("STATEGATE_TOOLS_URL is not set: run this agent under stategate")
        return 1
    episode = json.loads(sys.stdin.read())
    outcome, reply = handle(episode["message"], episode.get("context") or {})
    # The last line of stdout is the result.
    print(json.dumps({"reply": reply, "outcome": outcome}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
`;

/**
 * JavaScript with JSDoc types, checked by TypeScript (`// @ts-check`, or `tsc --checkJs`): Node
 * runs it as it is, on Node 20 as on Node 24, with no compile step and nothing fetched at run time.
 * A .ts file would need a compiler or Node's type stripping, which Node 20 does not have.
 */
export const TYPESCRIPT_AGENT = String.raw`// @ts-check
// A support agent that refunds part of an order: the starting point Stategate's scaffold gives you.
//
// It speaks the agent protocol: one JSON object on stdin ({"message", "context"}), its tools over
// HTTP at $STATEGATE_TOOLS_URL, and one JSON result line as the last line of stdout. Logs go to
// stderr. Replace handle() with your agent (an LLM loop, an SDK) and keep main()'s protocol.
// Plain JavaScript with JSDoc types: Node runs it as it is (no compile step, nothing to install),
// and TypeScript checks it in your editor (the @ts-check line above; with @types/node installed,
// also npx tsc --noEmit --allowJs --checkJs agent/agent.mjs).

const TRANSIENT = new Set([0, 429, 500, 502, 503, 504]);
const ATTEMPTS = 3;

/** @typedef {{ message: string, context?: { customer_id?: string } }} Episode */
/** @typedef {{ reply: string, outcome: 'SUCCESS' | 'FAILURE' | 'PARTIAL' | 'ESCALATED' }} Result */

/** @param {...unknown} parts */
function log(...parts) {
  console.error('agent:', ...parts);
}

/**
 * POST $STATEGATE_TOOLS_URL/tools/NAME. Status 0: no reply, so nothing is known.
 * @param {string} name
 * @param {Record<string, unknown>} args
 * @returns {Promise<{ status: number, body: any }>}
 */
async function call(name, args) {
  const url = String(process.env.STATEGATE_TOOLS_URL).replace(/\/$/, '') + '/tools/' + name;
  let res;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(args),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (err) {
    log(name, 'no reply:', err);
    return { status: 0, body: { code: 'NO_REPLY', message: String(err) } };
  }
  let parsed;
  try {
    parsed = await res.json();
  } catch {
    return { status: 0, body: { code: 'INVALID_RESPONSE', message: 'unparsable reply' } };
  }
  if (res.ok) return { status: res.status, body: parsed.result };
  return { status: res.status, body: parsed.error ?? { code: 'HTTP_' + res.status, message: '' } };
}

/** @param {number} amount */
const money = (amount) => '$' + amount.toFixed(2);

/**
 * One support request.
 * @param {string} message
 * @param {NonNullable<Episode['context']>} context
 * @returns {Promise<Result>}
 */
async function handle(message, context) {
  const order = /\bORD-\d+\b/.exec(message);
  const asked = /\$(\d+(?:\.\d{1,2})?)/.exec(message);
  if (!order || !asked) return { outcome: 'FAILURE', reply: 'Which order, and how much of it should I refund?' };
  const orderId = order[0];
  const amount = Number(asked[1]);

  const found = await call('lookup_order', { order_id: orderId });
  if (found.status === 404 || (found.status === 200 && found.body.customer_id !== context.customer_id))
    return { outcome: 'FAILURE', reply: 'I could not find order ' + orderId + ' on your account.' };
  if (found.status !== 200) return { outcome: 'FAILURE', reply: 'I could not look up order ' + orderId + ' right now.' };
  const left = Number(found.body.total) - Number(found.body.refunded);
  if (amount > left)
    return { outcome: 'FAILURE', reply: 'At most ' + money(left) + ' of ' + orderId + ' can still be refunded.' };

  // The same key on every attempt: a retry after a timeout replays the refund that landed
  // instead of refunding again.
  const key = 'refund-' + orderId + '-' + amount.toFixed(2);
  const args = { order_id: orderId, amount, idempotency_key: key };
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const { status, body } = await call('refund_order', args);
    if (status === 200) return { outcome: 'SUCCESS', reply: 'Done: I refunded ' + money(amount) + ' for order ' + orderId + '.' };
    if (!TRANSIENT.has(status))
      return { outcome: 'FAILURE', reply: 'The refund was declined: ' + (body.message || body.code) + '.' };
    log('refund_order failed with', status, '- attempt', attempt, 'of', ATTEMPTS);
    await new Promise((done) => setTimeout(done, 100));
  }
  return { outcome: 'FAILURE', reply: 'The payment provider did not answer; please try again later.' };
}

async function main() {
  if (!process.env.STATEGATE_TOOLS_URL) {
    log('STATEGATE_TOOLS_URL is not set: run this agent under stategate');
    return 1;
  }
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  /** @type {Episode} */
  const episode = JSON.parse(input);
  const result = await handle(episode.message, episode.context ?? {});
  // The last line of stdout is the result.
  process.stdout.write(JSON.stringify(result) + '\n');
  return 0;
}

process.exitCode = await main();
`;
