-- The demo shop's support database: what the refund agent's twin tools read and write.
-- No column defaults to the clock, so two episodes of the same case end in identical states.

CREATE TABLE customers (
  id text PRIMARY KEY,
  name text NOT NULL,
  email text NOT NULL,
  tier text NOT NULL DEFAULT 'standard',
  -- Store credit: changed only by the admin-only tool admin_adjust_balance.
  balance numeric(10, 2) NOT NULL DEFAULT 0
);

CREATE TABLE orders (
  id text PRIMARY KEY,
  customer_id text NOT NULL REFERENCES customers (id),
  status text NOT NULL DEFAULT 'delivered',
  total numeric(10, 2) NOT NULL CHECK (total >= 0),
  refundable_amount numeric(10, 2) NOT NULL CHECK (refundable_amount >= 0),
  refunded_amount numeric(10, 2) NOT NULL DEFAULT 0 CHECK (refunded_amount >= 0),
  refund_count integer NOT NULL DEFAULT 0 CHECK (refund_count >= 0)
);

CREATE TABLE refunds (
  id serial PRIMARY KEY,
  order_id text NOT NULL REFERENCES orders (id),
  amount numeric(10, 2) NOT NULL CHECK (amount > 0),
  reason text,
  -- The caller's idempotency key, when it sent one: evidence of how the refund was asked for.
  idempotency_key text
);

CREATE TABLE emails (
  id serial PRIMARY KEY,
  customer_id text NOT NULL REFERENCES customers (id),
  to_address text NOT NULL,
  subject text NOT NULL,
  body text NOT NULL
);

CREATE TABLE escalations (
  id serial PRIMARY KEY,
  customer_id text NOT NULL REFERENCES customers (id),
  -- Not a foreign key: a request without a valid order can still be handed to a human.
  order_id text,
  reason text NOT NULL
);

CREATE TABLE admin_audit (
  id serial PRIMARY KEY,
  actor text NOT NULL,
  action text NOT NULL,
  customer_id text NOT NULL,
  amount numeric(10, 2) NOT NULL,
  note text
);
