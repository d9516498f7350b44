// One twin file (docs/formats/twin.md): each tool validated on its own, so one broken tool neither
// hides the problems of the others nor makes every scenario that uses them report an unknown tool.
import { z } from 'zod';
import { bindNamedParams } from '../sql/named-params.js';
import { type InputSchemaChecker, inputSchemaProblems } from './input-schema.js';
import { notAMapping } from './scenario-file.js';
import { type Tool, TwinFile, TwinTool } from './schema.js';
import type { Problem } from './suite.js';
import { type FieldPath, problemAt, problemAtText, type YamlSource } from './yaml-source.js';
import { validate } from './zod-problems.js';

const TwinFileShape = z.strictObject({ tools: z.record(TwinFile.shape.tools.keyType, z.unknown()) });

export interface TwinFileResult {
  /** The tools that validated. */
  tools: Tool[];
  /** Every tool name the file declares, valid or not, so other files' references can be checked. */
  names: string[];
  problems: Problem[];
}

/** Validates a parsed twin file; its valid tools, every declared name, and every problem. */
export function readTwinFile(
  value: unknown,
  source: YamlSource,
  file: string,
  ajv: InputSchemaChecker,
): TwinFileResult {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      tools: [],
      names: [],
      problems: [notAMapping(source, value, 'tools: { <name>: { risk, input, sql } }')],
    };
  }
  const raw = (value as { tools?: unknown }).tools;
  const names = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? Object.keys(raw) : [];
  const shape = validate(TwinFileShape, value, source);
  const problems: Problem[] = shape.ok ? [] : [...shape.problems];
  const tools: Tool[] = [];
  if (!shape.ok) return { tools, names, problems };
  for (const [name, body] of Object.entries(shape.data.tools)) {
    const at: FieldPath = ['tools', name];
    const result = validate(TwinTool, body, source, at);
    if (!result.ok) {
      problems.push(...result.problems);
      continue;
    }
    const toolProblems = toolChecks(result.data, source, at, ajv);
    problems.push(...toolProblems);
    if (toolProblems.length === 0) tools.push({ ...result.data, name, file });
  }
  return { tools, names, problems };
}

/**
 * SQLSTATE classes an `errors:` entry may not claim: they are not errors at all, or they say the
 * suite's SQL is wrong (42: a missing table or a refused privilege) or the server failed; mapping
 * them to tool answers would turn a broken suite or a lost connection into something to grade.
 */
const RESERVED_CLASSES: Record<string, string> = {
  '00': 'successful completion',
  '01': 'warning',
  '02': 'no data',
  '08': 'connection exception',
  // A function body is checked only when it runs: a wrong schema, a missing RETURN or a statement
  // the server cannot run in a tool's transaction is met there, and must stay the harness's error.
  '0A': 'feature not supported',
  '25': 'invalid transaction state',
  '2F': 'SQL routine exception',
  '39': 'external routine invocation exception',
  '3D': 'invalid catalog name',
  '3F': 'invalid schema name',
  '42': 'syntax error or access rule violation',
  '53': 'insufficient resources',
  '57': 'operator intervention',
  '58': 'system error',
  F0: 'configuration file error',
  XX: 'internal error',
};

/** Checks a tool's parts against its own input schema: arguments named in SQL, keys and messages. */
function toolChecks(tool: TwinTool, source: YamlSource, at: FieldPath, ajv: InputSchemaChecker): Problem[] {
  const problems = inputSchemaProblems(ajv, tool.input, source, [...at, 'input']);
  const properties = tool.input.properties;
  const args = typeof properties === 'object' && properties !== null ? Object.keys(properties) : [];
  const known = new Set(args);
  const argList =
    args.length > 0 ? `the arguments are ${args.join(', ')}` : 'input.properties declares no arguments';

  if (tool.idempotency_key !== undefined && !known.has(tool.idempotency_key)) {
    problems.push(
      problemAt(
        source,
        [...at, 'idempotency_key'],
        `idempotency_key names '${tool.idempotency_key}', which is not an argument in input.properties (${argList})`,
      ),
    );
  }
  const sqlFields: { path: FieldPath; sql: string }[] = [];
  if (tool.sql !== undefined) sqlFields.push({ path: [...at, 'sql'], sql: tool.sql });
  tool.preconditions.forEach((p, i) => {
    sqlFields.push({ path: [...at, 'preconditions', i, 'query'], sql: p.query });
  });
  for (const { path, sql } of sqlFields) {
    for (const name of bindNamedParams(sql).names) {
      if (known.has(name)) continue;
      problems.push(
        problemAtText(
          source,
          path,
          `:${name}`,
          `the parameter :${name} is not an argument in input.properties (${argList})`,
        ),
      );
    }
  }
  if (tool.errors !== undefined && tool.sql === undefined) {
    problems.push(
      problemAt(source, [...at, 'errors'], 'errors: maps SQLSTATEs the SQL raises, but the tool has no sql'),
    );
  }
  for (const sqlstate of Object.keys(tool.errors ?? {})) {
    const why = RESERVED_CLASSES[sqlstate.slice(0, 2)];
    if (why === undefined) continue;
    problems.push(
      problemAt(
        source,
        [...at, 'errors', sqlstate],
        `SQLSTATE ${sqlstate} is of class ${sqlstate.slice(0, 2)} (${why}), which the database itself raises when the suite or the server is broken, so it cannot stand for a tool error; raise a code of your own, e.g. ERRCODE = 'SG422'`,
      ),
    );
  }
  const templates: { path: FieldPath; text: string | undefined }[] = [
    { path: [...at, 'effect_key'], text: tool.effect_key },
    { path: [...at, 'not_found', 'message'], text: tool.not_found?.message },
    ...tool.preconditions.map((p, i) => ({
      path: [...at, 'preconditions', i, 'error', 'message'],
      text: p.error.message,
    })),
  ];
  for (const { path, text } of templates) {
    for (const m of (text ?? '').matchAll(/\{([^{}\s]+)\}/g)) {
      if (known.has(m[1])) continue;
      problems.push(
        problemAtText(
          source,
          path,
          m[0],
          `the placeholder ${m[0]} is not an argument in input.properties (${argList})`,
        ),
      );
    }
  }
  return problems;
}
