// Exact readings of the scalar forms a database driver hands back: decimals (numeric, bigint, float)
// and instants (timestamptz in ISO or Postgres text form). Exact, so 2^63-1 and microseconds survive.

/** A decimal as sign, significant digits and a power of ten: value = ±digits × 10^exp. */
export interface Decimal {
  negative: boolean;
  /** No leading or trailing zeros; '' for zero. */
  digits: string;
  exp: number;
}

// The text Postgres prints for numeric and integer types: no leading zeros, so '007' stays a string.
const DECIMAL_TEXT = /^([+-])?(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Reads a number, bigint or canonical decimal string exactly; null when it is none of these. */
export function parseDecimal(value: unknown): Decimal | null {
  let text: string;
  if (typeof value === 'bigint') text = value.toString();
  else if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    text = String(value);
  } else if (typeof value === 'string') text = value;
  else return null;
  const m = DECIMAL_TEXT.exec(text);
  if (!m) return null;
  const fraction = m[3] ?? '';
  let digits = (m[2] + fraction).replace(/^0+/, '');
  let exp = Number(m[4] ?? 0) - fraction.length;
  const trailing = /0*$/.exec(digits)![0].length;
  digits = digits.slice(0, digits.length - trailing);
  exp += trailing;
  if (digits === '') return { negative: false, digits: '', exp: 0 };
  return { negative: m[1] === '-', digits, exp };
}

/** Orders two decimals: negative, zero or positive like a sort comparator. */
export function compareDecimals(a: Decimal, b: Decimal): number {
  const sign = (d: Decimal) => (d.digits === '' ? 0 : d.negative ? -1 : 1);
  if (sign(a) !== sign(b)) return sign(a) - sign(b);
  if (sign(a) === 0) return 0;
  const magnitude = compareMagnitudes(a, b);
  return a.negative ? -magnitude : magnitude;
}

function compareMagnitudes(a: Decimal, b: Decimal): number {
  // The position of the leading digit decides first; equal positions compare digit by digit.
  const lead = a.digits.length + a.exp - (b.digits.length + b.exp);
  if (lead !== 0) return lead;
  const width = Math.max(a.digits.length, b.digits.length);
  const x = a.digits.padEnd(width, '0');
  const y = b.digits.padEnd(width, '0');
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A point in time: milliseconds since the epoch plus the nanoseconds below a millisecond. */
export interface Instant {
  ms: number;
  subMsNanos: number;
}

// ISO 8601 and Postgres text: `2024-05-01T10:00:00.123456+02:00`, `2024-05-01 10:00:00+02`, a bare date.
const INSTANT_TEXT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Reads a Date or a timestamp string as an instant; null when it is not one. A string without an
 * offset is read as UTC, so a `timestamp` column compares against the values it was written with.
 */
export function parseInstant(value: unknown): Instant | null {
  if (value instanceof Date) {
    const ms = value.getTime();
    return Number.isNaN(ms) ? null : { ms, subMsNanos: 0 };
  }
  if (typeof value !== 'string') return null;
  const m = INSTANT_TEXT.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0));
  if (month < 1 || month > 12 || day < 1 || hour > 24 || minute > 59 || second > 60) return null;
  const base = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC rolls 31 February over into March; a real timestamp never needs that.
  if (new Date(Date.UTC(year, month - 1, day)).getUTCDate() !== day) return null;
  const fraction = (m[7] ?? '').padEnd(9, '0');
  const ms = base + Number(fraction.slice(0, 3)) - offsetMinutes(m[8]) * 60_000;
  return { ms, subMsNanos: Number(fraction.slice(3)) };
}

function offsetMinutes(zone: string | undefined): number {
  if (!zone || zone === 'Z' || zone === 'z') return 0;
  const sign = zone[0] === '-' ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0));
}

/** Orders two instants: negative, zero or positive like a sort comparator. */
export function compareInstants(a: Instant, b: Instant): number {
  return a.ms !== b.ms ? a.ms - b.ms : a.subMsNanos - b.subMsNanos;
}

/** Reads the text forms of a boolean a driver may return ('t', 'true', 'f', 'false'); null otherwise. */
export function parseBoolean(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return null;
  const text = value.toLowerCase();
  if (text === 't' || text === 'true') return true;
  if (text === 'f' || text === 'false') return false;
  return null;
}
