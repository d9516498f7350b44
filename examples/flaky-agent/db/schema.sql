-- A tiny support database where two customers share a name: enough to show a flaky agent.
CREATE TABLE customers (
  id text PRIMARY KEY,
  name text NOT NULL,
  email text NOT NULL
);

CREATE TABLE emails (
  id serial PRIMARY KEY,
  customer_id text NOT NULL REFERENCES customers (id),
  to_address text NOT NULL,
  subject text NOT NULL,
  body text NOT NULL
);
