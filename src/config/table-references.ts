// Every table and column a scenario names outside its SQL (`state.rows` and its columns,
// `changes` and its `where` columns, `only_changes`, `forbid_changes`, `ignore_columns`, also stategate.yml's) checked against the template's catalog. SQL is
// prepared against the template; these names are not SQL, so without this check a guard on a
// misspelt table (`forbid_changes: {table: patient}` for `patients`) would pass forever.
import path from 'node:path';
import type { IgnoreColumns, Scenario, StategateConfig } from './schema.js';
import { displayPath } from './source-file.js';
import { didYouMean } from './suggest.js';
import type { Problem, SuiteSql } from './suite.js';
import { type FieldPath, formatPath, parseYaml, problemAt, type YamlSource } from './yaml-source.js';

/** Table key (`orders`, `billing.invoices`) → its column names: what the template holds. */
export type TableCatalog = Record<string, readonly string[]>;

/** One problem per table or column a scenario names that the template does not have. */
export function tableReferenceProblems(
  suite: Pick<SuiteSql, 'root' | 'files' | 'scenarios'>,
  catalog: TableCatalog,
): Problem[] {
  const problems: Problem[] = [];
  for (const scenario of suite.scenarios) {
    const text = suite.files[scenario.file];
    const file = displayPath(path.resolve(suite.root, scenario.file));
    const { table, column } = checker(file, text, catalog, problems);
    for (const [name, rows] of Object.entries(scenario.state.rows)) {
      if (!table(name, ['state', 'rows', name], true)) continue;
      rows.forEach((row, i) => {
        for (const col of Object.keys(row)) column(name, col, ['state', 'rows', name, i, col]);
      });
    }
    scenario.expect.forEach((e, i) => {
      expectationTables(e, ['expect', i], table, column);
    });
    ignoreColumnsTables(scenario.ignore_columns, table, column);
  }
  return problems;
}

/** One problem per table or column stategate.yml's `ignore_columns` names that the template does not have. */
export function configTableProblems(
  configFile: string,
  text: string | undefined,
  config: Pick<StategateConfig, 'ignore_columns'>,
  catalog: TableCatalog,
): Problem[] {
  const problems: Problem[] = [];
  const { table, column } = checker(displayPath(configFile), text, catalog, problems);
  ignoreColumnsTables(config.ignore_columns, table, column);
  return problems;
}

/** Checks of names against the catalog that push a problem at the field of one file. */
function checker(
  file: string,
  text: string | undefined,
  catalog: TableCatalog,
  problems: Problem[],
): { table: TableCheck; column: ColumnCheck } {
  const tables = Object.keys(catalog);
  // Parsed again only for a position to report: a suite whose names all exist (every run's) parses
  // none of its files a second time.
  let source: YamlSource | null | undefined;
  const at = (field: FieldPath, message: string, key = false): Problem => {
    source ??= text === undefined ? null : parseYaml(file, text).source;
    return source
      ? problemAt(source, field, message, { key })
      : { file, line: 1, col: 1, path: formatPath(field), message };
  };
  const table = (name: string, field: FieldPath, key = false): boolean => {
    if (Object.hasOwn(catalog, name)) return true;
    const known = tables.length > 0 ? tables.join(', ') : 'none';
    problems.push(
      at(
        field,
        `unknown table '${name}': expected a table of the template (${known})${didYouMean(name, tables)}`,
        key,
      ),
    );
    return false;
  };
  const column = (tableName: string, name: string, field: FieldPath, key = true) => {
    const columns = catalog[tableName] ?? [];
    if (columns.includes(name)) return;
    problems.push(
      at(
        field,
        `unknown column '${name}' of table '${tableName}': expected one of ${columns.join(', ')}${didYouMean(name, columns)}`,
        key,
      ),
    );
  };
  return { table, column };
}

function ignoreColumnsTables(list: IgnoreColumns | undefined, table: TableCheck, column: ColumnCheck) {
  for (const [name, columns] of Object.entries(list ?? {})) {
    if (!table(name, ['ignore_columns', name], true)) continue;
    columns.forEach((c, i) => {
      column(name, c, ['ignore_columns', name, i], false);
    });
  }
}

type TableCheck = (name: string, field: FieldPath, key?: boolean) => boolean;
type ColumnCheck = (table: string, name: string, field: FieldPath, key?: boolean) => void;

function expectationTables(
  e: Scenario['expect'][number],
  at: FieldPath,
  table: TableCheck,
  column: ColumnCheck,
) {
  if ('forbid_changes' in e) table(e.forbid_changes.table, [...at, 'forbid_changes', 'table']);
  if ('only_changes' in e) {
    e.only_changes.forEach((name, j) => {
      table(name, [...at, 'only_changes', j]);
    });
  }
  if ('changes' in e) {
    const spec = e.changes;
    if (!table(spec.table, [...at, 'changes', 'table'])) return;
    for (const col of Object.keys(spec.where ?? {}))
      column(spec.table, col, [...at, 'changes', 'where', col]);
  }
}
