// The agent's version manifest: directives that script the planner. Read from manifest.json beside
// the agent files, so switching versions is switching one data file.
import { readFile } from 'node:fs/promises';

/**
 * @typedef {{
 *   name: string, version: string, summary?: string,
 *   policy_lookup: boolean, builtin_max_auto_refund: number, idempotency_key: boolean,
 *   verify_before_retry: boolean, retry_without_lookup_on: number[], verify_before_confirm: boolean,
 *   max_retries: number, max_wait_ms: number, confirmation_email: boolean,
 * }} Directives
 */

const BOOLEANS = [
  'policy_lookup',
  'idempotency_key',
  'verify_before_retry',
  'verify_before_confirm',
  'confirmation_email',
];
const COUNTS = ['builtin_max_auto_refund', 'max_retries', 'max_wait_ms'];

/** Checks a parsed manifest and returns its directives, or throws naming every bad field. */
export function checkManifest(value, file = 'manifest.json') {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${file}: expected a JSON object`);
  const problems = [];
  for (const key of ['name', 'version']) {
    if (typeof value[key] !== 'string' || value[key] === '')
      problems.push(`${key}: expected a non-empty string`);
  }
  for (const key of BOOLEANS) {
    if (typeof value[key] !== 'boolean')
      problems.push(`${key}: expected true or false, got ${JSON.stringify(value[key])}`);
  }
  for (const key of COUNTS) {
    if (!Number.isInteger(value[key]) || value[key] < 0) {
      problems.push(`${key}: expected a whole number >= 0, got ${JSON.stringify(value[key])}`);
    }
  }
  const statuses = value.retry_without_lookup_on;
  if (!Array.isArray(statuses) || !statuses.every((s) => Number.isInteger(s) && s >= 0 && s <= 599)) {
    problems.push(
      `retry_without_lookup_on: expected a list of HTTP statuses, got ${JSON.stringify(statuses)}`,
    );
  }
  if (problems.length > 0) throw new Error(`${file}: ${problems.join('; ')}`);
  return /** @type {Directives} */ (value);
}

/** Reads and checks manifest.json from the agent's directory (by default, this file's). */
export async function loadManifest(dir = new URL('.', import.meta.url)) {
  const url = new URL('manifest.json', dir);
  const text = await readFile(url, 'utf8');
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`${url.pathname}: not valid JSON: ${err.message}`);
  }
  return checkManifest(parsed, url.pathname);
}
