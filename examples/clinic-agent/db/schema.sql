-- A small clinic: two patients share a name, so an agent must ask who is calling before it acts.
CREATE TABLE patients (
  id integer PRIMARY KEY,
  name text NOT NULL,
  dob date NOT NULL
);

CREATE TABLE appointments (
  id integer PRIMARY KEY,
  patient_id integer NOT NULL REFERENCES patients (id),
  starts_at text NOT NULL,
  status text NOT NULL DEFAULT 'booked'
);
