// Which of a scenario's fault rules fired, per side: a scenario that injects a timeout into a tool
// the agent never calls tests nothing about timeouts, and says so only if someone counts. The
// gateway records on each call the fault that applied to it; a rule is matched to a call by its
// tool and fault (two rules with the same tool and fault count the same calls).
import { isModelFault, type Scenario } from '../config/schema.js';
import type { GradedEpisode } from '../model/episode.js';
import type { FaultFired } from '../model/report.js';

/** Each fault rule of the scenario, in order, with the number of repeats in which it fired. */
export function faultsFired(scenario: Scenario, episodes: readonly GradedEpisode[]): FaultFired[] {
  return scenario.faults.map((rule, i) =>
    isModelFault(rule)
      ? {
          rule: i + 1,
          model: rule.model,
          fault: rule.fault,
          repeats: episodes.filter((e) =>
            (e.record.modelCalls ?? []).some((c) => c.provider === rule.model && c.fault === rule.fault),
          ).length,
        }
      : {
          rule: i + 1,
          tool: rule.tool,
          fault: rule.fault,
          repeats: episodes.filter((e) =>
            e.record.calls.some((c) => c.tool === rule.tool && c.fault === rule.fault),
          ).length,
        },
  );
}
