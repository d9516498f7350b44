// A twin tool's `input` is a JSON Schema the gateway validates every call against; a schema ajv
// cannot compile would fail every call, so the loader compiles it first and points at the bad part.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { Problem } from './suite.js';
import { type FieldPath, problemAt, type YamlSource } from './yaml-source.js';

// ajv-formats is CommonJS with a default export; under NodeNext the function sits on `.default`.
const addFormats = ((addFormatsPlugin as unknown as { default?: unknown }).default ??
  addFormatsPlugin) as unknown as (ajv: Ajv) => void;

/** The ajv instance input schemas are compiled with: strict about unknown keywords and formats. */
export type InputSchemaChecker = Ajv;

let shared: InputSchemaChecker | undefined;

/** The checker, created once: building ajv and compiling its meta-schema is the expensive part. */
export function inputSchemaChecker(): InputSchemaChecker {
  if (!shared) {
    shared = new Ajv({
      allErrors: true,
      strict: true,
      strictTypes: false,
      strictTuples: false,
      logger: false,
    });
    addFormats(shared);
  }
  return shared;
}

/** Problems with a tool's input schema: not a JSON Schema, not compilable, or not for an object. */
export function inputSchemaProblems(
  ajv: InputSchemaChecker,
  schema: Record<string, unknown>,
  source: YamlSource,
  at: FieldPath,
): Problem[] {
  try {
    if (!ajv.validateSchema(schema)) return metaSchemaProblems(ajv.errors ?? [], source, at);
    ajv.compile(schema);
  } catch (err) {
    const message = (err as Error).message;
    const path = [...at, ...compileErrorPath(message, schema)];
    return [problemAt(source, path, `invalid JSON Schema: ${message}`, { key: true })];
  } finally {
    forget(ajv, schema);
  }
  if (schema.type !== undefined && schema.type !== 'object') {
    return [
      problemAt(
        source,
        [...at, 'type'],
        `the input schema describes the arguments, a JSON object: expected type: object, got ${JSON.stringify(schema.type)}`,
      ),
    ];
  }
  return [];
}

/** Drops a compiled schema from the shared instance, so one tool's `$id` cannot clash with another's. */
function forget(ajv: InputSchemaChecker, schema: Record<string, unknown>): void {
  try {
    ajv.removeSchema(schema);
    if (typeof schema.$id === 'string') ajv.removeSchema(schema.$id);
  } catch {
    // Nothing was registered under this schema: nothing to forget.
  }
}

/** One problem per schema location, with the most telling of ajv's errors there. */
function metaSchemaProblems(errors: ErrorObject[], source: YamlSource, at: FieldPath): Problem[] {
  const byPath = new Map<string, ErrorObject[]>();
  for (const e of errors) byPath.set(e.instancePath, [...(byPath.get(e.instancePath) ?? []), e]);
  return [...byPath].map(([instancePath, list]) => {
    const best =
      list.find((e) => e.keyword === 'enum') ??
      list.find((e) => e.keyword === 'type') ??
      list.find((e) => !['anyOf', 'oneOf', 'if'].includes(e.keyword)) ??
      list[0];
    const allowed = (best.params as { allowedValues?: unknown[] }).allowedValues;
    const detail = allowed ? `must be one of ${allowed.join(', ')}` : (best.message ?? 'is invalid');
    return problemAt(source, [...at, ...pointerSegments(instancePath)], `invalid JSON Schema: ${detail}`);
  });
}

/** JSON Pointer (`/properties/a~1b`) to path segments. */
function pointerSegments(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** Where in the schema a compile error is: the schema path ajv names, or the unknown keyword's key. */
function compileErrorPath(message: string, schema: unknown): (string | number)[] {
  const atPath = /at path "#([^"]*)"/.exec(message);
  if (atPath) {
    const segments = pointerSegments(decodeURIComponent(atPath[1]));
    return /unknown format/.test(message) ? [...segments, 'format'] : segments;
  }
  const keyword = /unknown keyword: "([^"]+)"/.exec(message);
  return keyword ? (findKey(schema, keyword[1]) ?? []) : [];
}

/** The path of the first object key named `key`, breadth first (no recursion on user data). */
function findKey(root: unknown, key: string): (string | number)[] | undefined {
  const queue: { value: unknown; path: (string | number)[] }[] = [{ value: root, path: [] }];
  while (queue.length > 0) {
    const { value, path } = queue.shift()!;
    if (typeof value !== 'object' || value === null) continue;
    if (!Array.isArray(value) && Object.hasOwn(value, key)) return [...path, key];
    for (const [k, v] of Object.entries(value))
      queue.push({ value: v, path: [...path, Array.isArray(value) ? Number(k) : k] });
  }
  return undefined;
}
