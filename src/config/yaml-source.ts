// Parsing one YAML (or JSON) file into plain data while keeping its syntax tree, so every later
// problem, from zod or from a cross-file check, can point at the line and column it is about.
import {
  type Document,
  isAlias,
  isCollection,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  type Pair,
  parseDocument,
  type Scalar,
  visit,
  type YAMLMap,
} from 'yaml';
import type { Problem } from './suite.js';

/** A field path inside a document: keys and list indexes. */
export type FieldPath = readonly (string | number)[];

/** Deeper documents are refused: no suite file needs them, and they only serve to exhaust the stack. */
export const MAX_DEPTH = 64;
/** Aliases are expanded when converting to data; a cap stops "billion laughs" documents. */
export const MAX_ALIAS_COUNT = 1000;

/** Syntax errors reported per file; past the first few, more are noise from the same mistake. */
const MAX_SYNTAX_PROBLEMS = 10;

/** A parsed file: its display path, text and syntax tree, for locating fields. */
export interface YamlSource {
  file: string;
  text: string;
  doc: Document.Parsed;
  lineCounter: LineCounter;
}

export interface ParsedYaml {
  source: YamlSource;
  /** The document as plain data; undefined when the file has syntax problems. */
  value: unknown;
  problems: Problem[];
}

/**
 * Parses YAML text; syntax errors, unresolved aliases and excessive nesting become problems.
 * `prepare` may rewrite the tree before it becomes data (variable expansion) and report problems.
 */
export function parseYaml(
  file: string,
  text: string,
  prepare?: (source: YamlSource) => Problem[],
): ParsedYaml {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, merge: true });
  const source: YamlSource = { file, text, doc, lineCounter };
  const problems: Problem[] = [];
  const seen = new Set<string>();
  for (const err of [...doc.errors, ...doc.warnings]) {
    const message =
      err.code === 'RESOURCE_EXHAUSTION'
        ? 'the document nests too deeply to parse'
        : yamlMessage(err.message);
    // One broken construct can make the parser repeat itself; the first report is the useful one.
    if (seen.has(message) || seen.size >= MAX_SYNTAX_PROBLEMS) continue;
    seen.add(message);
    problems.push({ ...positionAt(source, err.pos[0]), file, message: `YAML: ${message}` });
  }
  if (problems.length === 0) problems.push(...structureProblems(source));
  if (problems.length > 0) return { source, value: undefined, problems };
  // Problems from `prepare` (an unset variable) leave the document readable: keep checking it.
  if (prepare) problems.push(...prepare(source));
  try {
    return { source, value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }), problems };
  } catch (err) {
    // What is left to fail is alias expansion past the cap, or a `<<` merge of something not a map.
    const message = (err as Error).message;
    const where = conversionCulprit(source, /merge/i.test(message) ? 'merge' : 'alias');
    const problem = { file, ...where, message: `YAML: ${message}` };
    return { source, value: undefined, problems: [...problems, problem] };
  }
}

/** The first `<<` merge key, or the first alias: where a failed conversion most likely started. */
function conversionCulprit(source: YamlSource, kind: 'merge' | 'alias'): { line: number; col: number } {
  let found: Node | undefined;
  visit(source.doc, {
    Pair(_, pair) {
      if (kind === 'merge' && isScalar(pair.key) && pair.key.source === '<<') {
        found = pair.key;
        return visit.BREAK;
      }
    },
    Alias(_, alias) {
      if (kind === 'alias') {
        found = alias;
        return visit.BREAK;
      }
    },
  });
  return nodePosition(source, found);
}

function yamlMessage(message: string): string {
  return message.replace(/; please use YAML\.parseAllDocuments\(\)/, ': one document per file');
}

/** Depth and alias checks, done with an explicit stack so a hostile document cannot overflow ours. */
function structureProblems(source: YamlSource): Problem[] {
  const problems: Problem[] = [];
  const stack: { node: unknown; depth: number }[] = [{ node: source.doc.contents, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (isAlias(node)) {
      if (!node.resolve(source.doc)) {
        problems.push({
          ...nodePosition(source, node),
          file: source.file,
          message: `YAML: the alias *${node.source} has no anchor &${node.source} before it`,
        });
      }
      continue;
    }
    if (isScalar(node) && typeof node.value === 'number') {
      const problem = inexactNumber(source, node);
      if (problem) problems.push(problem);
      continue;
    }
    if (!isCollection(node)) continue;
    if (depth > MAX_DEPTH) {
      problems.push({
        ...nodePosition(source, node),
        file: source.file,
        message: `the document nests deeper than ${MAX_DEPTH} levels`,
      });
      return problems;
    }
    for (const item of node.items) {
      if (isPair(item)) {
        stack.push({ node: item.key, depth: depth + 1 });
        stack.push({ node: item.value, depth: depth + 1 });
      } else stack.push({ node: item, depth: depth + 1 });
    }
  }
  return problems;
}

// A plain decimal as YAML writes it: 12, -3.50, .5, 1e21 (not 0x1F, 0o17, .inf or .nan).
const DECIMAL_SOURCE = /^([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * A number YAML reads as a different double than the one written (9007199254740993 becomes
 * ...992, 0.30000000000000001 becomes 0.3, 1e400 becomes Infinity): compared as read, it would
 * pass a value the author never wrote, so it is a problem that asks for the exact decimal quoted
 * (a quoted decimal compares by its exact value in a number column).
 */
function inexactNumber(source: YamlSource, node: Scalar): Problem | null {
  const text = typeof node.source === 'string' ? node.source.trim() : '';
  const m = DECIMAL_SOURCE.exec(text);
  if (!m || !/\d/.test(`${m[2]}${m[3] ?? ''}`)) return null;
  const value = node.value as number;
  if (Number.isFinite(value) && sameDecimal(m, String(value))) return null;
  return {
    ...nodePosition(source, node),
    file: source.file,
    message: `the number ${text} has more digits than YAML's numbers hold (it reads as ${value}); quote it ('${text}') to compare the exact decimal`,
  };
}

/** Whether the decimal a source match writes equals a JavaScript number's text (1e+21 form too). */
function sameDecimal(m: RegExpExecArray, numberText: string): boolean {
  const n = DECIMAL_SOURCE.exec(numberText.replace('e+', 'e'));
  if (!n) return false;
  const canon = (x: RegExpExecArray) => {
    const fraction = x[3] ?? '';
    let digits = `${x[2]}${fraction}`.replace(/^0+/, '');
    let exp = Number(x[4] ?? 0) - fraction.length;
    const trailing = /0*$/.exec(digits)![0].length;
    digits = digits.slice(0, digits.length - trailing);
    exp += trailing;
    return digits === '' ? '0' : `${x[1] === '-' ? '-' : ''}${digits}e${exp}`;
  };
  return canon(m) === canon(n);
}

/** 1-based line and column of a character offset. */
export function positionAt(source: YamlSource, offset: number): { line: number; col: number } {
  const { line, col } = source.lineCounter.linePos(Math.max(0, Math.min(offset, source.text.length)));
  return { line, col };
}

function nodePosition(source: YamlSource, node: unknown): { line: number; col: number } {
  const range = (node as Node | null)?.range;
  return range ? positionAt(source, range[0]) : { line: 1, col: 1 };
}

/**
 * The node at a field path (the key node when `key` is set), or the deepest node on the way when the
 * path leaves the document, e.g. the mapping a required field is missing from.
 */
export function nodeAt(source: YamlSource, path: FieldPath, opts: { key?: boolean } = {}): Node | null {
  return walk(source, path, opts.key ?? false).node;
}

function walk(source: YamlSource, path: FieldPath, key: boolean): { node: Node | null; complete: boolean } {
  let node: unknown = source.doc.contents;
  for (let i = 0; i < path.length; i++) {
    if (isAlias(node)) node = node.resolve(source.doc);
    const segment = path[i];
    if (isMap(node)) {
      const pair = findPair(source, node, String(segment));
      if (!pair) return { node: node as Node, complete: false };
      if (i === path.length - 1 && key) return { node: pair.key as Node, complete: true };
      // A key with no value (`id:`) has no value node: point at the key.
      if (pair.value === null || pair.value === undefined) {
        return { node: pair.key as Node, complete: i === path.length - 1 };
      }
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number' && node.items[segment] !== undefined) {
      node = node.items[segment];
    } else return { node: (node as Node | null) ?? null, complete: false };
  }
  return { node: (node as Node | null) ?? null, complete: true };
}

/** The pair with this key in a mapping, or in the mappings it merges with `<<`. */
function findPair(source: YamlSource, map: YAMLMap, key: string, depth = 0): Pair | undefined {
  const own = map.items.find((p) => !isMergeKey(p.key) && keyText(p.key) === key);
  if (own || depth > 8) return own;
  for (const p of map.items) {
    if (!isMergeKey(p.key)) continue;
    const sources = isSeq(p.value) ? p.value.items : [p.value];
    for (const s of sources) {
      const target = isAlias(s) ? s.resolve(source.doc) : s;
      const found = isMap(target) ? findPair(source, target, key, depth + 1) : undefined;
      if (found) return found;
    }
  }
  return undefined;
}

function isMergeKey(key: unknown): boolean {
  return isScalar(key) && key.source === '<<';
}

function keyText(key: unknown): string {
  if (isScalar(key)) return String(key.value);
  return String(key);
}

/** The 1-based line and column a problem about `path` should point at. */
export function locate(
  source: YamlSource,
  path: FieldPath,
  opts: { key?: boolean } = {},
): { line: number; col: number } {
  return nodePosition(source, nodeAt(source, path, opts));
}

/** A problem at a field of a parsed file. */
export function problemAt(
  source: YamlSource,
  path: FieldPath,
  message: string,
  opts: { key?: boolean } = {},
): Problem {
  const out: Problem = { file: source.file, ...locate(source, path, opts), message };
  if (path.length > 0) out.path = formatPath(path);
  return out;
}

/** Formats a field path the way a reader writes it: `expect[2].equals`, `tools.refund_payment.sql`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(String(segment)))
      out += out === '' ? String(segment) : `.${String(segment)}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

/** The source range [start, end) of the node at a path, for finding text inside a scalar. */
export function rangeAt(source: YamlSource, path: FieldPath): [number, number] | null {
  const { node, complete } = walk(source, path, false);
  if (isAlias(node)) return null;
  return complete && node?.range ? [node.range[0], node.range[1]] : null;
}

/** A problem at the first occurrence of `needle` inside the field's source text (else at the field). */
export function problemAtText(source: YamlSource, path: FieldPath, needle: string, message: string): Problem {
  const problem = problemAt(source, path, message);
  const range = rangeAt(source, path);
  if (!range) return problem;
  const i = source.text.slice(range[0], range[1]).indexOf(needle);
  return i === -1 ? problem : { ...problem, ...positionAt(source, range[0] + i) };
}
