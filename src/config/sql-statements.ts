// Every SQL text in a suite that must prepare against the template, with the position it came from,
// so `stategate validate` can report a bad column as scenarios/x.yaml:12:5 before any agent runs.
import path from 'node:path';
import { isSeq } from 'yaml';
import { expectationSql } from '../expectations/registry.js';
import { bindNamedParams, splitStatements } from '../sql/named-params.js';
import { displayPath } from './source-file.js';
import type { SuiteSql } from './suite.js';
import {
  type FieldPath,
  formatPath,
  locate,
  nodeAt,
  parseYaml,
  positionAt,
  rangeAt,
  type YamlSource,
} from './yaml-source.js';

export { bindNamedParams, splitStatements };

/** One SQL statement to prepare, where it is written, and how many `$n` parameters it takes. */
export interface SqlStatement {
  file: string;
  line: number;
  col: number;
  /** What the statement is, for messages: "tool refund_payment, statement 2". */
  what: string;
  /** The statement with `:name` parameters already converted to `$n`. */
  sql: string;
  paramCount: number;
}

/** Lists every statement of twin tools, preconditions, expectation queries and scenario state SQL. */
export function collectSqlStatements(suite: SuiteSql): SqlStatement[] {
  const out: SqlStatement[] = [];
  const sources = new Map<string, YamlSource | null>();
  const sourceOf = (rel: string): YamlSource | null => {
    if (!sources.has(rel)) {
      const text = suite.files[rel];
      const file = displayPath(path.resolve(suite.root, rel));
      sources.set(rel, text === undefined ? null : parseYaml(file, text).source);
    }
    return sources.get(rel) ?? null;
  };
  const add = (rel: string, field: FieldPath, sql: string, what: string, named: boolean) => {
    const file = displayPath(path.resolve(suite.root, rel));
    const statements = splitStatements(sql);
    // Positions are found when first read (a problem to report), all of a field's at once: a suite
    // whose statements all prepare (every run's) parses none of its files a second time.
    let positions: { line: number; col: number }[] | undefined;
    const positionOf = (i: number) => {
      positions ??= statementPositions(sourceOf(rel), field, statements);
      return positions[i];
    };
    statements.forEach((statement, i) => {
      const label = statements.length > 1 ? `${what}, statement ${i + 1}` : what;
      const bound = named ? bindNamedParams(statement) : { text: statement, names: [] };
      const found = { file, what: label, sql: bound.text, paramCount: bound.names.length };
      out.push(
        Object.defineProperties(found, {
          line: { enumerable: true, get: () => positionOf(i).line },
          col: { enumerable: true, get: () => positionOf(i).col },
        }) as SqlStatement,
      );
    });
  };

  for (const tool of [...suite.tools.values()].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  )) {
    const at: FieldPath = ['tools', tool.name];
    if (tool.sql !== undefined) add(tool.file, [...at, 'sql'], tool.sql, `tool ${tool.name}`, true);
    for (const [i, p] of tool.preconditions.entries()) {
      add(
        tool.file,
        [...at, 'preconditions', i, 'query'],
        p.query,
        `tool ${tool.name}, precondition ${i + 1}`,
        true,
      );
    }
  }
  for (const scenario of suite.scenarios) {
    const stateSql = scenario.state.sql ?? [];
    // `state.sql` is one string or a list of them in the file; the loaded scenario always has a list.
    const source = stateSql.length > 0 ? sourceOf(scenario.file) : null;
    const written = source ? nodeAt(source, ['state', 'sql']) : null;
    stateSql.forEach((sql, i) => {
      const field: FieldPath = isSeq(written) ? ['state', 'sql', i] : ['state', 'sql'];
      add(scenario.file, field, sql, `scenario ${scenario.id}, ${formatPath(field)}`, false);
    });
    scenario.expect.forEach((e, i) => {
      const query = expectationSql(e);
      if (!query) return;
      const field: FieldPath = ['expect', i, ...query.at];
      add(scenario.file, field, query.sql, `expectation ${e.id}, ${formatPath(query.at)}`, false);
    });
  }
  return out;
}

/** Where each of a field's statements starts in the file (line 1, column 1 without its source). */
function statementPositions(
  source: YamlSource | null,
  field: FieldPath,
  statements: string[],
): { line: number; col: number }[] {
  let searchFrom = 0;
  return statements.map((statement) => {
    if (!source) return { line: 1, col: 1 };
    const where = statementPosition(source, field, statement, searchFrom);
    searchFrom = where.offset + 1;
    return { line: where.line, col: where.col };
  });
}

/**
 * Where a statement starts in the file: its first line found inside the field's source text
 * (exact for plain, quoted one-line and block scalars), else the field itself.
 */
function statementPosition(
  source: YamlSource,
  field: FieldPath,
  statement: string,
  searchFrom: number,
): { line: number; col: number; offset: number } {
  const range = rangeAt(source, field);
  const fallback = () => {
    const where = locate(source, field);
    return { ...where, offset: range ? range[0] : 0 };
  };
  if (!range) return fallback();
  const firstLine = statement.split('\n')[0].trim();
  const start = Math.max(range[0], searchFrom);
  const i = source.text.slice(start, range[1]).indexOf(firstLine);
  if (firstLine === '' || i === -1) return fallback();
  return { ...positionAt(source, start + i), offset: start + i };
}
