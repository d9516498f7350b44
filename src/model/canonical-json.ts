// One canonical JSON for every comparison and hash: the same value written with keys in another
// order is the same text. Tool arguments (the call record, idempotency, fault conditions), database
// values in grading, trajectories and the suite's pin all go through it.

/**
 * Returns a copy of a value as JSON would see it, with every object's keys sorted, recursively:
 * `toJSON` is applied first (a Date becomes its ISO string), a bigint becomes its decimal text and
 * keys whose value is undefined are dropped.
 */
export function canonicalize(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  const json = (value as { toJSON?: unknown }).toJSON;
  if (typeof json === 'function') return canonicalize(json.call(value));
  if (Array.isArray(value)) return value.map(canonicalize);
  const record = value as Record<string, unknown>;
  // fromEntries defines own properties, so a `__proto__` key from JSON stays a plain key.
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .filter((key) => record[key] !== undefined)
      .map((key) => [key, canonicalize(record[key])]),
  );
}

/** JSON text of the canonical form: equal strings mean equal values. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonicalize(value)) ?? 'null';
}
