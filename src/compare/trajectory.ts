// An episode's trajectory: its recorded calls as steps, in call order. How a step reads as text is
// model/call-text.ts, shared with the renderings.
import type { CallText } from '../model/call-text.js';
import { canonicalJson } from '../model/canonical-json.js';
import type { CallRecord } from '../model/episode.js';

export type Effect = CallText['effect'];

/** One step of a trajectory: what was called and what happened, from the gateway's record. */
export type Step = CallText;

/** The steps of a trajectory, in call order. */
export function toTrajectory(calls: readonly CallRecord[]): Step[] {
  return [...calls]
    .sort((a, b) => a.seq - b.seq)
    .map((c) => {
      const step: Step = {
        tool: c.tool,
        args: c.args,
        status: c.status,
        effect: c.replay ? 'replayed' : c.mutated ? 'applied' : 'none',
      };
      if (c.fault) step.fault = c.fault;
      if (c.status >= 200 && c.status < 300 && Array.isArray(c.result)) step.rows = c.result.length;
      return step;
    });
}

/** The identity of a step for grouping: tool, canonical arguments, status, effect and rows returned. */
export function stepSignature(step: Step): string {
  return [step.tool, canonicalJson(step.args), step.status, step.effect, step.rows ?? ''].join('\u0000');
}
