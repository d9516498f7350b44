// `${VAR}` in stategate.yml expands from the environment (docs/formats/stategate.md). Expansion happens on
// the parsed scalars, never on the text, so a variable's value cannot inject YAML structure.
import { isScalar, Scalar, visit } from 'yaml';
import { DATABASE_URL_VAR, isWorkflowToken } from './harness-secrets.js';
import type { Problem } from './suite.js';
import { formatPath, positionAt, type YamlSource } from './yaml-source.js';

const REFERENCE = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Why `${name}` may not expand in `value` at `fieldPath`, or undefined when it may. The file is the
 * code under review's: whatever a field names, the harness connects to, pulls from or sends to, so a
 * workflow token expands nowhere, and the admin database URL only as the whole of `database.url`
 * (inside another URL it would go to that URL's server).
 */
function refusedReference(name: string, fieldPath: string, value: string): string | undefined {
  if (isWorkflowToken(name))
    return `\${${name}} names a workflow token, which stategate.yml never expands (the harness would hand it to whatever this field names): remove the reference`;
  if (name === DATABASE_URL_VAR && (fieldPath !== 'database.url' || value.trim() !== `\${${name}}`))
    return `\${${name}} expands only as the whole of database.url (url: \${${name}}): put the complete URL in the variable`;
  return undefined;
}

/**
 * Replaces `${VAR}` in every string value of the document (keys stay as written); `$${` is a literal
 * `${`. An unset variable, or one refusedReference refuses there, is a problem naming it, at its
 * position in the file.
 */
export function expandEnv(source: YamlSource, env: NodeJS.ProcessEnv): Problem[] {
  const problems: Problem[] = [];
  visit(source.doc, {
    Scalar(key, node, path) {
      if (key === 'key' || typeof node.value !== 'string' || !node.value.includes('$')) return;
      const fieldPath = pathOf(path, node);
      const raw = node.range ? source.text.slice(node.range[0], node.range[1]) : '';
      let searchFrom = 0;
      const at = (needle: string) => {
        const i = raw.indexOf(needle, searchFrom);
        if (i === -1 || !node.range)
          return node.range ? positionAt(source, node.range[0]) : { line: 1, col: 1 };
        searchFrom = i + needle.length;
        return positionAt(source, node.range[0] + i);
      };
      const problem = (needle: string, message: string) =>
        problems.push({
          file: source.file,
          ...at(needle),
          ...(fieldPath ? { path: fieldPath } : {}),
          message,
        });
      const expanded = node.value.replace(REFERENCE, (match, name: string | undefined) => {
        if (match === '$${') {
          at(match);
          return '${';
        }
        if (name === undefined) {
          problem(match, "'${' without a closing '}'; write '$${' for a literal '${'");
          return match;
        }
        if (!NAME.test(name)) {
          problem(
            match,
            `'${match}' is not a variable reference: a name is letters, digits and _, not starting with a digit`,
          );
          return match;
        }
        const refused = refusedReference(name, fieldPath, node.value as string);
        if (refused) {
          problem(match, refused);
          return match;
        }
        const value = env[name];
        if (value === undefined) {
          problem(match, `the environment variable ${name} is not set`);
          return match;
        }
        at(match);
        return value;
      });
      if (expanded === node.value) return;
      // A plain `${N}` where a number or boolean belongs reads as one, like the same text would.
      const retyped = node.type === Scalar.PLAIN ? typedScalar(expanded) : expanded;
      node.value = retyped;
    },
  });
  return problems;
}

function typedScalar(text: string): string | number | boolean {
  if (/^-?(0|[1-9]\d*)(\.\d+)?$/.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  return text;
}

/** The field path of a scalar from the ancestors `visit` passes. */
function pathOf(ancestors: readonly unknown[], node: unknown): string {
  const segments: (string | number)[] = [];
  const chain = [...ancestors, node];
  for (let i = 0; i < chain.length - 1; i++) {
    const parent = chain[i] as { items?: unknown[]; key?: unknown };
    const child = chain[i + 1];
    if (parent && 'key' in parent && 'value' in parent) {
      segments.push(isScalar(parent.key) ? String(parent.key.value) : String(parent.key));
    } else if (Array.isArray(parent?.items)) {
      const index = parent.items.indexOf(child);
      // In a mapping the next ancestor is the pair, which carries the key.
      if (index !== -1 && !isPairLike(child)) segments.push(index);
    }
  }
  return formatPath(segments);
}

function isPairLike(node: unknown): boolean {
  return typeof node === 'object' && node !== null && 'key' in node && 'value' in node;
}
