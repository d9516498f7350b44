// `query` + comparators: the read-only query on the final state satisfies every comparator given
// (one row of one column compares as a scalar; `rows` compares the whole result).
import { defineKind } from '../kind.js';
import {
  gradeQueryCheck,
  QUERY_CHECK_FIELDS,
  QUERY_CHECK_PARAMS,
  queryCheckProblems,
} from '../query-check.js';

export const query = defineKind({
  key: 'query',
  fields: QUERY_CHECK_FIELDS,
  evidence: 'state',
  params: QUERY_CHECK_PARAMS,
  sql: (e) => ({ sql: e.query, at: ['query'] }),
  grade: (e, record) => {
    const { id, critical: _critical, query: _query, ...comparators } = e;
    return gradeQueryCheck(comparators, record.queries[id], id);
  },
  check: (e) => queryCheckProblems(e),
});
