#!/usr/bin/env python3
"""A support-refund agent in Python with the standard library only, for Stategate's demo suite.

Written from docs/agent-protocol.md alone: one JSON object on stdin ({"message", "context"}), the
tools over the HTTP JSON API at $STATEGATE_TOOLS_URL, one result line on stdout. Logs go to stderr.
Run it under stategate: `agent: {command: python3 examples/python-agent/agent.py}`.
"""
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

TRANSIENT = {0, 408, 425, 429, 500, 502, 503, 504}
MAX_RETRIES = 2
MAX_WAIT_S = 0.2
CALL_TIMEOUT_S = 10


def log(*parts):
    print("python-agent:", *parts, file=sys.stderr, flush=True)


class Tools:
    """The gateway's HTTP JSON API: POST $STATEGATE_TOOLS_URL/tools/NAME with the arguments."""

    def __init__(self, url):
        self.url = url.rstrip("/")

    def call(self, name, args):
        """Returns (ok, status, result or error dict, retry_after seconds or None)."""
        request = urllib.request.Request(
            f"{self.url}/tools/{name}",
            data=json.dumps(args).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=CALL_TIMEOUT_S) as res:
                status, body, headers = res.status, res.read(), res.headers
        except urllib.error.HTTPError as err:
            status, body, headers = err.code, err.read(), err.headers
        except Exception as err:  # a dropped connection, a timeout: nothing is known
            log(f"{name}: no reply ({err})")
            return False, 0, {"code": "CONNECTION_FAILED", "message": str(err)}, None
        retry_after = headers.get("Retry-After")
        wait = float(retry_after) if retry_after and re.fullmatch(r"\d+(\.\d+)?", retry_after) else None
        try:
            parsed = json.loads(body)
        except ValueError:
            # A cut or garbled body: the call may have done its work, so treat it as unknown.
            return False, status, {"code": "INVALID_RESPONSE", "message": "unparsable reply"}, wait
        if 200 <= status < 300 and isinstance(parsed, dict) and "result" in parsed:
            return True, status, parsed["result"], None
        error = parsed.get("error", {}) if isinstance(parsed, dict) else {}
        return False, status, {"code": error.get("code", f"HTTP_{status}"), "message": error.get("message", "")}, wait


def money(n):
    return f"${n:.2f}"


def parse_request(message):
    order = re.search(r"\bORD-[A-Z0-9]+(?:-[A-Z0-9]+)*\b", message, re.I)
    amount = re.search(r"\$\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?", message)
    return (
        order.group(0).upper() if order else None,
        float(f"{amount.group(1).replace(',', '')}.{amount.group(2) or '0'}") if amount else None,
    )


def handle(message, context, tools):
    """One support turn; returns (outcome, reply)."""
    customer = context.get("customer_id") if isinstance(context.get("customer_id"), str) else None
    if not customer:
        return "FAILURE", "I need to know which customer account this is about before I can help."

    def escalate(order_id, reason, reply):
        args = {"customer_id": customer, "reason": reason}
        if order_id:
            args["order_id"] = order_id
        ok, _, _, _ = tools.call("escalate_to_human", args)
        if ok:
            return "ESCALATED", reply
        return "FAILURE", "I could not complete this and could not reach a colleague. Please contact support."

    def read(name, args):
        for attempt in range(MAX_RETRIES + 1):
            ok, status, value, wait = tools.call(name, args)
            if ok or status not in TRANSIENT or attempt == MAX_RETRIES:
                return ok, status, value
            time.sleep(min(wait if wait is not None else 0.1, MAX_WAIT_S))
        return ok, status, value

    order_id, amount = parse_request(message)
    if not order_id:
        return escalate(None, "Request without an order to refund; needs a human.",
                        "I can only refund orders. I have passed your request to a colleague.")
    if amount is None or amount <= 0:
        return "FAILURE", f"How much of order {order_id} should I refund?"

    ok, status, order = read("lookup_order", {"order_id": order_id})
    if not ok:
        if status == 404:
            return "FAILURE", f"I could not find order {order_id}."
        return "FAILURE", f"I could not look up order {order_id} right now. Please try again later."
    if order.get("customer_id") != customer:
        return "FAILURE", f"I could not find order {order_id} on your account."
    if amount > float(order["refundable_amount"]):
        return "FAILURE", f"At most {money(float(order['refundable_amount']))} of {order_id} can still be refunded."

    ok, _, policy = read("get_refund_policy", {"order_id": order_id})
    if not ok:
        return escalate(order_id, f"Refund of {money(amount)} requested; the policy could not be read.",
                        "I could not check our refund policy, so I have passed your request to a colleague.")
    limit = float(policy["max_auto_refund"])
    if amount > limit:
        return escalate(order_id, f"Refund of {money(amount)} exceeds the automatic limit of {money(limit)}.",
                        f"A refund of {money(amount)} needs a colleague's approval; I have passed it on.")

    def landed():
        ok, _, now = read("lookup_order", {"order_id": order_id})
        return ok and int(now["refund_count"]) > int(order["refund_count"])

    # The same key on every attempt: a retry of a refund that did land is answered, not applied again.
    args = {"order_id": order_id, "amount": amount, "reason": "customer request",
            "idempotency_key": f"refund-{order_id}-{amount:.2f}"}
    reported = confirmed = False
    for attempt in range(MAX_RETRIES + 1):
        ok, status, value, wait = tools.call("refund_payment", args)
        if ok:
            reported = True
            break
        if status not in TRANSIENT and value.get("code") != "INVALID_RESPONSE":
            return "FAILURE", f"The refund was declined: {value.get('message') or value.get('code')}."
        # A failed call may still have moved the money: look before trying again.
        if landed():
            confirmed = True
            break
        if attempt < MAX_RETRIES:
            time.sleep(min(wait if wait is not None else 0.1, MAX_WAIT_S))
    # Only the order's own record shows that the money moved: check it before claiming SUCCESS.
    if not confirmed and not landed():
        if reported:
            return escalate(order_id, f"The provider reported the refund of {money(amount)} on {order_id} as done, but the order shows none.",
                            f"I could not confirm the refund of {money(amount)} for {order_id}; a colleague will check it.")
        return escalate(order_id, f"The refund of {money(amount)} on {order_id} kept failing.",
                        f"I could not process the refund for {order_id}; a colleague will follow up.")

    done = f"We have refunded {money(amount)} for order {order_id} to your original payment method."
    sent, _, _, _ = tools.call("send_email", {"customer_id": customer, "subject": f"Your refund for {order_id}",
                                              "body": f"{done} It can take 5-10 business days to appear."})
    return "SUCCESS", f"Done: I refunded {money(amount)} for order {order_id}." + (
        " A confirmation email is on its way." if sent else "")


def main():
    tools_url = os.environ.get("STATEGATE_TOOLS_URL")
    if not tools_url:
        log("STATEGATE_TOOLS_URL is not set: run this agent under stategate")
        return 1
    episode = json.loads(sys.stdin.read())
    message, context = episode["message"], episode.get("context") or {}
    log(f"episode {os.environ.get('STATEGATE_EPISODE')} seed {os.environ.get('STATEGATE_SEED')}")
    outcome, reply = handle(message, context, Tools(tools_url))
    # The last line of stdout is the result; anything printed before it would be ignored.
    print(json.dumps({"reply": reply, "outcome": outcome}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
