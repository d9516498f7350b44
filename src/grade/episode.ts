// Grades one episode: the implicit `completed` first, then every expectation of the scenario, each
// a pure function of the episode record. Nothing here does I/O: the harness ran the queries already.
import type { Scenario, Tool } from '../config/schema.js';
import type { GradeContext, JudgeResult } from '../expectations/kind.js';
import { expectationKind, gradeExpectation } from '../expectations/registry.js';
import { GradeError } from '../expectations/values.js';
import { errored, type Grade } from '../expectations/verdicts.js';
import {
  COMPLETED,
  type EpisodeRecord,
  type ExpectationResult,
  type GradedEpisode,
} from '../model/episode.js';
import { gradeCompleted } from './completed.js';

export { COMPLETED };

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
    ...(notGraded ?? gradeCompleted(record.agent, record.conversation)),
  });
  for (const expectation of scenario.expect) {
    const kind = expectationKind(expectation);
    const ctx: GradeContext = { scenario, tools, judge: judgeResults?.get(expectation.id) };
    const grade = notGraded ?? guarded(() => gradeExpectation(expectation, record, ctx));
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
