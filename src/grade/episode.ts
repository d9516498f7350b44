// Grades one episode: the implicit `completed` first, then every expectation of the scenario, each
// a pure function of the episode record. Nothing here does I/O: the harness ran the queries already.
import {
  type Expectation,
  type ExpectationKind,
  type ExpectationOf,
  expectationKind,
  type Scenario,
  type Tool,
} from '../config/schema.js';
import {
  COMPLETED,
  type EpisodeRecord,
  type ExpectationResult,
  type GradedEpisode,
} from '../model/episode.js';
import {
  gradeMaxRetries,
  gradeMaxToolCalls,
  gradeNoDuplicateEffect,
  gradeOrder,
  gradeToolCalled,
  gradeToolNotCalled,
} from './calls.js';
import {
  gradeCompleted,
  gradeJudge,
  gradeOutcome,
  gradeOutcomeVerified,
  gradeReply,
  type JudgeResult,
} from './claims.js';
import { gradeQueryCheck } from './query.js';
import { gradeChanges, gradeForbidChanges, gradeOnlyChanges } from './state.js';
import { GradeError } from './values.js';
import { errored, type Grade } from './verdicts.js';

export { COMPLETED };

/** The kinds graded on the final database state. */
export const STATE_KINDS: readonly string[] = ['query', 'changes', 'only_changes', 'forbid_changes'];

/**
 * Grades an episode against its scenario's expectations. `tools` (the twin definitions) lets
 * `outcome_verified: true` know which write tools the scenario allows; `judgeResults`, keyed by
 * expectation id, carries what the judge said about `judge` expectations.
 */
export function gradeEpisode(
  scenario: Scenario,
  record: EpisodeRecord,
  tools?: Map<string, Tool>,
  judgeResults?: Map<string, JudgeResult>,
): GradedEpisode {
  const results: ExpectationResult[] = [];
  const infra = record.infraError;
  // Outside the agent's control: nothing about the agent can be concluded, so nothing fails.
  const notGraded = infra ? errored(`not graded: ${infra.stage} error: ${infra.message}`) : undefined;
  results.push({
    id: COMPLETED,
    kind: COMPLETED,
    critical: true,
    ...(notGraded ?? gradeCompleted(record.agent)),
  });
  for (const expectation of scenario.expect) {
    const kind = expectationKind(expectation);
    const grade =
      notGraded ?? guarded(() => gradeExpectation(kind, expectation, scenario, record, tools, judgeResults));
    results.push({ id: expectation.id, kind, critical: expectation.critical ?? false, ...grade });
  }
  return { record, results, passed: results.every((r) => r.verdict === 'pass') };
}

/**
 * Grades a stored episode again from its record (an episode reused from the baseline cache): the
 * record is the evidence, the grades stored beside it are not believed. Only `judge` expectations
 * keep their stored result, because the judge is a model the harness does not ask twice.
 */
export function regradeEpisode(
  scenario: Scenario,
  stored: GradedEpisode,
  tools?: Map<string, Tool>,
): GradedEpisode {
  const fresh = gradeEpisode(scenario, stored.record, tools);
  const judged = new Map(stored.results.filter((r) => r.kind === 'judge').map((r) => [r.id, r]));
  const results = fresh.results.map((r) => {
    const kept = r.kind === 'judge' && !stored.record.infraError ? judged.get(r.id) : undefined;
    return kept ? { ...kept, id: r.id, kind: r.kind, critical: r.critical } : r;
  });
  return { record: stored.record, results, passed: results.every((r) => r.verdict === 'pass') };
}

// An expectation that cannot be evaluated as written is that expectation's error, not the run's.
function guarded(grade: () => Grade): Grade {
  try {
    return grade();
  } catch (e) {
    if (e instanceof GradeError) return errored(e.message);
    throw e;
  }
}

function gradeExpectation(
  kind: ExpectationKind,
  e: Expectation,
  scenario: Scenario,
  record: EpisodeRecord,
  tools: Map<string, Tool> | undefined,
  judgeResults: Map<string, JudgeResult> | undefined,
): Grade {
  const { calls, diff, agent } = record;
  // `kind` comes from the key the expectation carries, so each cast below names what is there.
  switch (kind) {
    case 'query': {
      const { id: _id, critical: _critical, query: _query, ...comparators } = e as ExpectationOf<'query'>;
      return gradeQueryCheck(comparators, record.queries[e.id], e.id);
    }
    case 'changes':
      return gradeChanges((e as ExpectationOf<'changes'>).changes, diff);
    case 'only_changes':
      return gradeOnlyChanges((e as ExpectationOf<'only_changes'>).only_changes, diff);
    case 'forbid_changes':
      return gradeForbidChanges((e as ExpectationOf<'forbid_changes'>).forbid_changes, diff, calls);
    case 'tool_called':
      return gradeToolCalled((e as ExpectationOf<'tool_called'>).tool_called, calls);
    case 'tool_not_called':
      return gradeToolNotCalled((e as ExpectationOf<'tool_not_called'>).tool_not_called, calls);
    case 'no_duplicate_effect':
      return gradeNoDuplicateEffect((e as ExpectationOf<'no_duplicate_effect'>).no_duplicate_effect, calls);
    case 'order':
      return gradeOrder((e as ExpectationOf<'order'>).order, calls);
    case 'max_tool_calls':
      return gradeMaxToolCalls((e as ExpectationOf<'max_tool_calls'>).max_tool_calls, calls);
    case 'max_retries':
      return gradeMaxRetries((e as ExpectationOf<'max_retries'>).max_retries, calls);
    case 'outcome':
      return gradeOutcome((e as ExpectationOf<'outcome'>).outcome, agent);
    case 'outcome_verified': {
      const ov = e as ExpectationOf<'outcome_verified'>;
      return gradeOutcomeVerified(ov, scenario, agent, calls, record.queries[e.id], tools);
    }
    case 'reply_contains':
      return gradeReply(kind, (e as ExpectationOf<'reply_contains'>).reply_contains, agent);
    case 'reply_not_contains':
      return gradeReply(kind, (e as ExpectationOf<'reply_not_contains'>).reply_not_contains, agent);
    case 'reply_matches':
      return gradeReply(kind, (e as ExpectationOf<'reply_matches'>).reply_matches, agent);
    case 'judge':
      return gradeJudge((e as ExpectationOf<'judge'>).judge, judgeResults?.get(e.id));
  }
}
