// Canonical arguments: the same call written with keys in another order is the same call. The record,
// idempotency and fault `args` conditions all compare through these functions.
import { canonicalJson } from '../model/canonical-json.js';

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
