// `outcome: SUCCESS | FAILURE | PARTIAL | ESCALATED`: the outcome the agent claimed equals it.
import { z } from 'zod';
import type { AgentRun, Outcome } from '../../model/episode.js';
import { defineKind } from '../kind.js';
import { EXACT } from '../params.js';
import { failed, type Grade, passed } from '../verdicts.js';

/** `outcome`: the outcome the agent claimed equals the expected one. */
export function gradeOutcome(expected: Outcome, agent: AgentRun): Grade {
  const claimed = agent.result?.outcome;
  if (claimed === expected) return passed(`the agent claimed ${expected}, as expected`, expected, claimed);
  const got = claimed ?? (agent.result ? 'no outcome' : 'no result');
  return failed('WRONG_OUTCOME', `expected outcome ${expected}, got ${got}`, expected, claimed ?? null);
}

export const outcome = defineKind({
  key: 'outcome',
  fields: { outcome: z.enum(['SUCCESS', 'FAILURE', 'PARTIAL', 'ESCALATED']) },
  evidence: 'claims',
  params: { outcome: EXACT },
  grade: (e, record) => gradeOutcome(e.outcome, record.agent),
});
