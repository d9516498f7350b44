// How database values become plain JSON-able values, the same way for query results and for the
// rows of the change log. Set per pool (never globally), so other pg users in the process keep
// the driver's defaults.
//   int8, numeric       exact decimal strings ("150", "150.00"); the grader compares by meaning
//   timestamp(tz)       ISO 8601 in UTC with the server's fraction ("2024-05-01T10:00:00.5Z");
//                       a timestamp without time zone is read as UTC
//   date, time, interval  the server's text ("2024-05-01")
//   json, jsonb         parsed
//   bytea               the server's hex text ("\x0102"), which binds back as a bytea parameter
import pg from 'pg';

const { types } = pg;

const OID = {
  bytea: 17,
  int8: 20,
  json: 114,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  interval: 1186,
  numeric: 1700,
  jsonb: 3802,
  _bytea: 1001,
  _int8: 1016,
  _date: 1182,
  _timestamp: 1115,
  _timestamptz: 1185,
  _interval: 1187,
  _numeric: 1231,
} as const;

const TIMESTAMP =
  /^(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(\.\d+)?(?:([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?)?$/;

/** Converts a timestamp as Postgres prints it (text or JSON form) to ISO 8601 UTC, keeping the fraction. */
export function isoTimestamp(text: string): string {
  const m = TIMESTAMP.exec(text);
  // BC dates, years past 9999 and infinity have no ISO form worth inventing: keep the server's text.
  if (!m) return text;
  const d = new Date(0);
  d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  d.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), 0);
  if (m[8]) {
    const offset = (Number(m[9]) * 3600 + Number(m[10] ?? 0) * 60 + Number(m[11] ?? 0)) * 1000;
    d.setTime(d.getTime() - (m[8] === '+' ? offset : -offset));
  }
  const iso = d.toISOString();
  return `${iso.slice(0, 19)}${m[7] ?? ''}Z`;
}

const identity = (text: string): string => text;

// The typings describe arrayParser as a function; pg-types 2 exports { create(source, transform) }.
const arrayParser = types.arrayParser as unknown as {
  create(source: string, transform: (v: string | null) => unknown): { parse(): unknown[] };
};

function arrayOf(parse: (text: string) => unknown): (text: string) => unknown {
  return (text) => arrayParser.create(text, (v) => (v === null ? null : parse(v))).parse();
}

const overrides = new Map<number, (text: string) => unknown>([
  [OID.int8, identity],
  [OID.numeric, identity],
  [OID.date, identity],
  [OID.interval, identity],
  [OID.bytea, identity],
  [OID.timestamp, isoTimestamp],
  [OID.timestamptz, isoTimestamp],
  [OID._int8, arrayOf(identity)],
  [OID._numeric, arrayOf(identity)],
  [OID._date, arrayOf(identity)],
  [OID._interval, arrayOf(identity)],
  [OID._bytea, arrayOf(identity)],
  [OID._timestamp, arrayOf(isoTimestamp)],
  [OID._timestamptz, arrayOf(isoTimestamp)],
]);

/** The type parsers every sandbox connection uses (pass as `types` to a pg Pool or Client). */
export const sandboxTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (format !== 'binary') {
      const parse = overrides.get(oid);
      if (parse) return parse;
    }
    return types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * Session settings of the harness's connections: text forms above stable whatever the server's
 * defaults are, and commits that do not wait for the disk (a sandbox is thrown away anyway).
 */
export const SESSION_OPTIONS = '-c DateStyle=ISO -c bytea_output=hex -c synchronous_commit=off';

/** A number exactly as it appeared in JSON text (see parseRowJson). */
export class NumberText {
  constructor(readonly text: string) {}
}

const NUMBER = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y;

/**
 * Parses JSON like JSON.parse, but keeps every number as its source text (a NumberText), so int8
 * and numeric values of the change log stay exact until their column type says what they are.
 */
export function parseRowJson(text: string): unknown {
  let i = 0;
  const fail = (): never => {
    throw new Error(`invalid JSON at offset ${i}: ${text.slice(i, i + 20)}`);
  };
  const skipSpace = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const expect = (c: string) => {
    skipSpace();
    if (text[i] !== c) fail();
    i++;
  };
  const string = (): string => {
    const start = i;
    let escaped = false;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') escaped = true;
      i += text[i] === '\\' ? 2 : 1;
    }
    i++;
    return escaped ? (JSON.parse(text.slice(start, i)) as string) : text.slice(start + 1, i - 1);
  };
  // A list of items up to `close`: the items of an array, or the members of an object.
  const items = (close: string, item: () => void) => {
    i++;
    skipSpace();
    if (text[i] === close) {
      i++;
      return;
    }
    for (;;) {
      item();
      skipSpace();
      const c = text[i++];
      if (c === close) return;
      if (c !== ',') fail();
    }
  };
  const words: [string, unknown][] = [
    ['true', true],
    ['false', false],
    ['null', null],
  ];
  const value = (): unknown => {
    skipSpace();
    const c = text[i];
    if (c === '{') {
      const out: Record<string, unknown> = {};
      items('}', () => {
        skipSpace();
        if (text[i] !== '"') fail();
        const key = string();
        expect(':');
        out[key] = value();
      });
      return out;
    }
    if (c === '[') {
      const out: unknown[] = [];
      items(']', () => out.push(value()));
      return out;
    }
    if (c === '"') return string();
    for (const [word, v] of words) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return fail();
    i += m[0].length;
    return new NumberText(m[0]);
  };
  const out = value();
  skipSpace();
  if (i !== text.length) fail();
  return out;
}

/** A column's type as the change log needs it: its name, and its element's name for arrays. */
export interface ColumnType {
  type: string;
  element?: string;
}

function plain(value: unknown, number: (text: string) => unknown, scalar: (v: unknown) => unknown): unknown {
  if (value instanceof NumberText) return number(value.text);
  if (Array.isArray(value)) return value.map((v) => plain(v, number, scalar));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = plain(v, number, scalar);
    return out;
  }
  return scalar(value);
}

const EXACT = new Set(['int8', 'numeric', 'money']);
const TIMESTAMPS = new Set(['timestamp', 'timestamptz']);

/** Converts one column value of a to_jsonb(row) object to what a query of that column returns. */
export function columnValue(value: unknown, column: ColumnType | undefined): unknown {
  const base = column?.element ?? column?.type ?? 'json';
  if (base === 'json' || base === 'jsonb') return plain(value, Number, (v) => v);
  const number = EXACT.has(base) ? (t: string) => t : Number;
  const scalar = TIMESTAMPS.has(base)
    ? (v: unknown) => (typeof v === 'string' ? isoTimestamp(v) : v)
    : (v: unknown) => v;
  return plain(value, number, scalar);
}
