// The implicit critical expectation every episode has: the agent exited 0 within its timeout and
// printed a valid result. It is no kind of the registry: no scenario writes it.
import { failed, type Grade, passed } from '../expectations/verdicts.js';
import type { AgentRun } from '../model/episode.js';

/** The implicit critical expectation: the agent exited 0 within its timeout and printed a valid result. */
export function gradeCompleted(agent: AgentRun): Grade {
  const actual = { exitCode: agent.exitCode, signal: agent.signal, timedOut: agent.timedOut };
  const expected = 'exit 0 with a valid result';
  if (agent.timedOut) {
    const message = `the agent timed out after ${Math.round(agent.durationMs)} ms`;
    return failed('INCOMPLETE_RUN', message, expected, actual);
  }
  if (agent.exitCode !== 0) {
    const how = agent.signal
      ? `was killed by ${agent.signal}`
      : agent.exitCode === null
        ? 'did not run to an exit'
        : `exited with code ${agent.exitCode}`;
    const why = agent.resultError ? `: ${agent.resultError}` : '';
    return failed('INCOMPLETE_RUN', `expected the agent to exit 0, but it ${how}${why}`, expected, actual);
  }
  if (!agent.result || agent.resultError !== undefined) {
    const why = agent.resultError ?? 'no result line';
    return failed(
      'INCOMPLETE_RUN',
      `the agent exited 0 but printed no valid result: ${why}`,
      expected,
      actual,
    );
  }
  return passed('the agent exited 0 and printed a valid result', expected, actual);
}
