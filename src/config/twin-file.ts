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
