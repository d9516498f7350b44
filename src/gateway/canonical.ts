// Canonical arguments: the same call written with keys in another order is the same call. The record,
// idempotency and fault `args` conditions all compare through these functions.

/** Returns a copy of a JSON value with every object's keys sorted, recursively. */
export function canonicalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonicalize);
  if (value !== null && typeof value === 'object') {
    // fromEntries defines own properties, so a `__proto__` key from JSON stays a plain key.
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
        .map((key) => [key, canonicalize((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/** JSON text of the canonical form: equal strings mean equal values. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonicalize(value)) ?? 'null';
}

/** Whether `args` holds every key of `subset` with a canonically equal value. */
export function includesArgs(args: unknown, subset: Record<string, unknown>): boolean {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return false;
  const record = args as Record<string, unknown>;
  return Object.entries(subset).every(
    ([key, want]) => Object.hasOwn(record, key) && canonicalJson(record[key]) === canonicalJson(want),
  );
}

/** Fills `{name}` placeholders from `args`; a placeholder without a matching argument stays as written. */
export function fillPlaceholders(template: string, args: Record<string, unknown>): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) => {
    if (!Object.hasOwn(args, name) || args[name] === undefined) return whole;
    const v = args[name];
    return typeof v === 'string' ? v : canonicalJson(v);
  });
}
