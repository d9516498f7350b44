// The lockstep diff of two trajectories: the first step where base and head differ, said in one
// plain sentence that names both steps (docs/statistics.md). It reports the records, never a cause.

import { differingArgs, renderArgs, renderCall, renderResult, renderValue } from '../model/call-text.js';
import type { CallRecord } from '../model/episode.js';
import type { Divergence } from '../model/report.js';
import { type Step, toTrajectory } from './trajectory.js';

function argsPart(args: unknown, keys: string[]): string {
  if (keys.length === 1 && keys[0] === '') return renderArgs(args) || '(none)';
  const record = (args ?? {}) as Record<string, unknown>;
  return keys.map((k) => `${k}=${record[k] === undefined ? '(absent)' : renderValue(record[k])}`).join(', ');
}

function compareSteps(n: number, b: Step, h: Step): Divergence | null {
  if (b.tool !== h.tool) {
    return {
      kind: 'different-tool',
      step: n,
      sentence: `At step ${n} the base called ${renderCall(b)}; the head called ${renderCall(h)}.`,
    };
  }
  const keys = differingArgs(b.args, h.args);
  if (keys.length > 0) {
    const separator = keys.length > 1 ? '; ' : ', ';
    return {
      kind: 'different-arguments',
      step: n,
      sentence: `At step ${n} both sides called ${b.tool} with different arguments: base ${argsPart(b.args, keys)}${separator}head ${argsPart(h.args, keys)}.`,
    };
  }
  if (b.status !== h.status || b.effect !== h.effect) {
    return {
      kind: 'different-result',
      step: n,
      sentence: `At step ${n} both sides called ${renderCall(b)}; the base got ${renderResult(b)}, the head got ${renderResult(h)}.`,
    };
  }
  return null;
}

/** Walks both trajectories in lockstep to the first differing step; `step` is 1-based, 0 when they are the same. */
export function firstDivergence(
  baseCalls: readonly CallRecord[],
  headCalls: readonly CallRecord[],
): Divergence {
  const base = toTrajectory(baseCalls);
  const head = toTrajectory(headCalls);
  const common = Math.min(base.length, head.length);
  for (let i = 0; i < common; i++) {
    const d = compareSteps(i + 1, base[i], head[i]);
    if (d) return d;
  }
  if (base.length !== head.length) {
    const n = common + 1;
    const [stopped, went, next] =
      base.length < head.length ? ['base', 'head', head[common]] : ['head', 'base', base[common]];
    return {
      kind: 'stopped-early',
      step: n,
      sentence: `At step ${n} the ${stopped} stopped; the ${went} called ${renderCall(next)}.`,
    };
  }
  const sentence =
    base.length === 0
      ? 'Neither side called a tool.'
      : `Both sides made the same ${base.length === 1 ? 'call' : `${base.length} calls`} with the same results.`;
  return { kind: 'same', step: 0, sentence };
}
