// Argument validation against each tool's `input` JSON Schema (docs/formats/twin.md: a call that
// violates it gets 400). Validators compile once per tool, when a session opens.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import formatsPlugin from 'ajv-formats';
import type { Tool } from '../config/schema.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object on some loaders.
const addFormats = ((formatsPlugin as unknown as { default?: typeof formatsPlugin }).default ??
  formatsPlugin) as unknown as (ajv: Ajv) => Ajv;

/** Checks a call's arguments; returns null when they are valid, else a message naming each bad field. */
export type ArgumentCheck = (args: unknown) => string | null;

// Twin schemas are users' data: unknown keywords are tolerated, every violation is reported at once.
const ajv = addFormats(new Ajv({ allErrors: true, strict: false, validateFormats: true }));
const compiled = new WeakMap<Tool, ArgumentCheck>();

/** Compiles (once per tool) the check for a tool's arguments; throws when its input schema is invalid. */
export function argumentCheck(tool: Tool): ArgumentCheck {
  const known = compiled.get(tool);
  if (known) return known;
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(tool.input);
  } catch (err) {
    throw new Error(
      `tool ${tool.name} (${tool.file}): input is not a valid JSON Schema: ${(err as Error).message}`,
    );
  }
  const check: ArgumentCheck = (args) => {
    if (args === null || typeof args !== 'object' || Array.isArray(args))
      return 'arguments must be a JSON object';
    return validate(args) ? null : describeErrors(validate.errors ?? []);
  };
  compiled.set(tool, check);
  return check;
}

/** `/amount must be number; / must have required property 'order_id'`. */
function describeErrors(errors: ErrorObject[]): string {
  const lines = errors.map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${detail(e)}`);
  return [...new Set(lines)].join('; ');
}

function detail(e: ErrorObject): string {
  if (e.keyword === 'enum')
    return `: ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  if (e.keyword === 'additionalProperties')
    return `: '${(e.params as { additionalProperty: string }).additionalProperty}'`;
  return '';
}
