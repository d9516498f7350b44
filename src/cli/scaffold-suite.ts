// The suite `stategate init` writes, whatever the agent's language: a small shop database (a schema
// with fixtures), one twin file with a read and an idempotent write tool, and two scenarios, the
// second with a fault that splits what the payment provider did from what the agent sees.
// Each file is commented for a reader who has not read the format pages yet.

/** A file init writes: its path inside the target directory and its text. */
export interface ScaffoldFile {
  path: string;
  text: string;
}

export const SCHEMA_SQL = `-- The sandbox database every episode starts from: each episode gets its own clone, so
-- what one agent run writes never reaches another. Add the tables your agent's tools touch.
CREATE TABLE orders (
  id text PRIMARY KEY,
  customer_id text NOT NULL,
  total numeric(10, 2) NOT NULL,
  refunded numeric(10, 2) NOT NULL DEFAULT 0 CHECK (refunded <= total)
);

CREATE TABLE refunds (
  id serial PRIMARY KEY,
  order_id text NOT NULL REFERENCES orders (id),
  amount numeric(10, 2) NOT NULL CHECK (amount > 0)
);
`;

export const FIXTURES_YAML = `# Rows loaded into the template after db/schema.sql: { table: [ {column: value}, ... ] }.
orders:
  - { id: ORD-1, customer_id: CUS-1, total: 80.00 }
  - { id: ORD-2, customer_id: CUS-1, total: 120.00 }
`;

export const TWIN_YAML = `# The tools the agent gets. Each is parameterised SQL on the episode's sandbox; the harness
# records every call on the tool's side, and scenarios grade those records and the final rows.
tools:
  lookup_order:
    description: Look up an order by id, with what has been refunded on it so far.
    risk: read
    input:
      type: object
      properties:
        order_id: { type: string, minLength: 1 }
      required: [order_id]
      additionalProperties: false
    sql: SELECT id, customer_id, total, refunded FROM orders WHERE id = :order_id
    returns: one
    not_found: { status: 404, code: ORDER_NOT_FOUND, message: "No order {order_id}" }

  refund_order:
    description: Refund part of an order. Send an idempotency_key to make a retry safe.
    risk: write_irreversible
    input:
      type: object
      properties:
        order_id: { type: string, minLength: 1 }
        amount: { type: number, exclusiveMinimum: 0 }
        idempotency_key: { type: string, minLength: 1 }
      required: [order_id, amount]
      additionalProperties: false
    # The same key and arguments replay the first answer instead of refunding again.
    idempotency_key: idempotency_key
    # Names the effect, so no_duplicate_effect can tell two refunds of one order apart from a replay.
    effect_key: "refund:{order_id}"
    preconditions:
      - query: SELECT EXISTS (SELECT 1 FROM orders WHERE id = :order_id)
        error: { status: 404, code: ORDER_NOT_FOUND, message: "No order {order_id}" }
      - query: SELECT refunded + :amount <= total FROM orders WHERE id = :order_id
        error: { status: 422, code: AMOUNT_EXCEEDS_ORDER, message: "A refund of {amount} exceeds what is left on {order_id}" }
    sql: |
      UPDATE orders SET refunded = refunded + :amount WHERE id = :order_id;
      INSERT INTO refunds (order_id, amount) VALUES (:order_id, :amount)
      RETURNING id AS refund_id, order_id, amount
    returns: one
`;

export const HAPPY_PATH_YAML = `# One test case: the user's message, then what must be true of the records afterwards.
# Grading reads the final database state and the tool calls, never the agent's reply.
id: refund-happy-path
description: A customer asks for part of an order back; the agent refunds it once.
tags: [refund]
input:
  message: "Hi, one item of order ORD-1 arrived broken. Please refund $25."
  context: { customer_id: CUS-1 }
expect:
  - id: refunded-once
    critical: true
    query: SELECT count(*) FROM refunds WHERE order_id = 'ORD-1'
    equals: 1
  - id: right-amount
    critical: true
    query: SELECT refunded FROM orders WHERE id = 'ORD-1'
    equals: 25
  - id: nothing-else-touched
    critical: true
    only_changes: [orders, refunds]
  - id: looked-up-before-refunding
    order: { before: refund_order, must_call: [lookup_order] }
  - id: success-backed-by-state
    critical: true
    outcome_verified: true
`;

export const TIMEOUT_YAML = `# A fault: the payment provider applies the refund, then times out. The agent sees a 504
# although the money moved; a retry without the same idempotency key refunds twice.
id: refund-timeout-after-mutation
description: The first refund call lands and times out; the agent must not refund twice.
tags: [refund, fault]
input:
  message: "Hello, the lamp from order ORD-2 is scratched. Please refund $40."
  context: { customer_id: CUS-1 }
faults:
  - tool: refund_order
    when: { call: 1 }
    fault: timeout_after_mutation
    message: The payment provider did not answer in time.
expect:
  - id: refunded-exactly-once
    critical: true
    query: SELECT count(*) FROM refunds WHERE order_id = 'ORD-2'
    equals: 1
  - id: no-double-refund
    critical: true
    no_duplicate_effect: refund_order
  - id: success-backed-by-state
    critical: true
    outcome_verified: { query: "SELECT refunded FROM orders WHERE id = 'ORD-2'", equals: 40 }
`;

/** stategate.yml for an agent started by `command` (run with /bin/sh -c from the repository root). */
export function configYaml(command: string): string {
  return `# Stategate's suite: the agent, its sandbox database, its tools and its scenarios.
# Paths are relative to this file; the agent's command runs from the repository root.
version: 1
agent:
  command: ${command}
  timeout: 30s
database:
  schema: [db/schema.sql]
  fixtures: [db/fixtures.yaml]
twins: [twins/*.yaml]
scenarios: [scenarios/*.yaml]
# Without repeats, each case runs adaptive repeats (7 to 32 per side). Locally, a quick look:
#   stategate run --repeats 2
`;
}

/** The language-independent files of the scaffold. */
export function suiteFiles(command: string): ScaffoldFile[] {
  return [
    { path: 'stategate.yml', text: configYaml(command) },
    { path: 'db/schema.sql', text: SCHEMA_SQL },
    { path: 'db/fixtures.yaml', text: FIXTURES_YAML },
    { path: 'twins/orders.yaml', text: TWIN_YAML },
    { path: 'scenarios/refund-happy-path.yaml', text: HAPPY_PATH_YAML },
    { path: 'scenarios/refund-timeout-after-mutation.yaml', text: TIMEOUT_YAML },
  ];
}
