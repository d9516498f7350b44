// Every SQL statement of a suite prepared against its built template, before anything runs: a twin
// naming a missing column is refused at file:line instead of failing each tool call of each episode.
// The tables and columns scenarios name outside SQL (state.rows, changes, forbid_changes, ...) are
// checked against the same template.
import { readFileSync } from 'node:fs';
import { collectSqlStatements } from '../config/load.js';
import type { StategateConfig } from '../config/schema.js';
import type { Problem, SuiteSql } from '../config/suite.js';
import { configTableProblems, tableReferenceProblems } from '../config/table-references.js';
import type { Template } from '../sandbox/types.js';

/**
 * One problem per statement the template refuses (twin SQL, preconditions, queries, state.sql), and
 * per table or column a scenario names that the template does not have.
 */
export async function prepareSuiteSql(
  suite: SuiteSql & { configFile?: string; config?: Partial<Pick<StategateConfig, 'ignore_columns'>> },
  template: Template,
): Promise<Problem[]> {
  const problems: Problem[] = [];
  // Scenarios repeat the same queries: a text prepares the same wherever it stands, so it is asked
  // once (five round trips each) and its answer reported at every place it stands.
  const answers = new Map<string, string | null>();
  for (const st of collectSqlStatements(suite)) {
    const key = `${st.paramCount}\n${st.sql}`;
    let error = answers.get(key);
    if (error === undefined) {
      error = await template.prepare(st.sql, st.paramCount);
      answers.set(key, error);
    }
    if (error) problems.push({ file: st.file, line: st.line, col: st.col, message: `${st.what}: ${error}` });
  }
  problems.push(...tableReferenceProblems(suite, template.columns));
  if (suite.configFile && suite.config?.ignore_columns) {
    // Read again for its lines: the loader keeps only the suite's other files.
    const text = readConfigText(suite.configFile);
    problems.push(...configTableProblems(suite.configFile, text, suite.config, template.columns));
  }
  return problems;
}

/** The same problems as a run reports them: the suite cannot run, and what to do about it. */
export function refusedSuiteProblems(problems: Problem[]): Problem[] {
  return problems.map((p) => ({
    ...p,
    // A problem at a field (a name the suite uses) already says what was expected.
    message: p.path
      ? `${p.message} (the suite cannot run; \`stategate validate\` checks every name against the template)`
      : `${p.message} (the suite cannot run: fix this statement so it prepares against the schema; \`stategate validate\` checks every statement)`,
  }));
}

function readConfigText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
