// Every SQL statement of a suite prepared against its built template, before anything runs: a twin
// naming a missing column is refused at file:line instead of failing each tool call of each episode.
import { collectSqlStatements } from '../config/load.js';
import type { Problem, SuiteSql } from '../config/suite.js';
import type { Template } from '../sandbox/types.js';

/** One problem per statement the template refuses (twin SQL, preconditions, queries, state.sql). */
export async function prepareSuiteSql(suite: SuiteSql, template: Template): Promise<Problem[]> {
  const problems: Problem[] = [];
  for (const st of collectSqlStatements(suite)) {
    const error = await template.prepare(st.sql, st.paramCount);
    if (error) problems.push({ file: st.file, line: st.line, col: st.col, message: `${st.what}: ${error}` });
  }
  return problems;
}

/** The same problems as a run reports them: the suite cannot run, and what to do about it. */
export function refusedSuiteProblems(problems: Problem[]): Problem[] {
  return problems.map((p) => ({
    ...p,
    message: `${p.message} (the suite cannot run: fix this statement so it prepares against the schema; \`stategate validate\` checks every statement)`,
  }));
}
