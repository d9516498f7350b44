// Every parameter of every expectation kind says what an edit of it does: the suite-changes
// classifier reads these roles, so a parameter left out would be compared by nothing.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Params } from '../../src/expectations/params.js';
import { EXPECTATION_KINDS, kindNamed } from '../../src/expectations/registry.js';

/** The object schema inside optional, default and union wrappers, if there is one. */
function objectOf(schema: z.ZodType): z.ZodObject | undefined {
  if (schema instanceof z.ZodObject) return schema;
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault)
    return objectOf(schema.unwrap() as z.ZodType);
  if (schema instanceof z.ZodUnion)
    return (schema.options as z.ZodType[]).map(objectOf).find((o) => o !== undefined);
  return undefined;
}

/** Fields of a schema that have no role in the declared params, as dotted paths. */
function undeclared(shape: z.ZodObject, params: Params, prefix: string): string[] {
  return Object.entries(shape.shape).flatMap(([name, field]) => {
    const param = params[name];
    if (!param) return [`${prefix}${name}`];
    const inner = objectOf(field as z.ZodType);
    if (inner && param.role === 'fields') return undeclared(inner, param.fields, `${prefix}${name}.`);
    if (inner && param.role !== 'filter') return [`${prefix}${name} (a mapping declared ${param.role})`];
    return [];
  });
}

describe('the expectation registry', () => {
  it('declares a role for every parameter of every kind', () => {
    const missing = EXPECTATION_KINDS.flatMap((key) => {
      const kind = kindNamed(key)!;
      const { id: _id, critical: _critical, ...fields } = kind.schema.shape;
      return undeclared(z.strictObject(fields), kind.params, `${key}: `);
    });
    expect(missing).toEqual([]);
    expect(EXPECTATION_KINDS.length).toBe(18);
  });

  it('declares no role for a field the schema does not have', () => {
    const extra = EXPECTATION_KINDS.flatMap((key) => {
      const kind = kindNamed(key)!;
      return Object.keys(kind.params)
        .filter((name) => !(name in kind.schema.shape))
        .map((name) => `${key}: ${name}`);
    });
    expect(extra).toEqual([]);
  });
});
