// The sequential test over one case: which expectations it decided, whether the case needs another
// look, and one sentence saying how many episodes the case took and why it stopped.
import type { SideSummary } from '../model/report.js';
import { decideExpectation, type ExpectationDecision, type SequentialPolicy } from './sequential.js';

export interface CaseDecision {
  /** Another look is worth its episodes. */
  more: boolean;
  /** Per expectation the head failed at least once: the test's decision. */
  expectations: Record<string, ExpectationDecision>;
  /** Why the case stopped (or goes on), with the repeat counts. */
  reason: string;
}

function graded(s: SideSummary): number {
  return s.runs - (s.infraErrors ?? 0);
}

function percent(p: number): string {
  return p < 0.001 ? '<0.001' : p.toFixed(3);
}

/** Decides a case at a look from its side summaries; `base` null has nothing to compare against. */
export function decideCase(
  base: SideSummary | null,
  head: SideSummary,
  policy: SequentialPolicy,
): CaseDecision {
  const n = base ? `base ${base.runs}, head ${head.runs} repeats` : `head ${head.runs} repeats`;
  if (!base) return { more: false, expectations: {}, reason: `No base side to compare against (${n}).` };
  // Repeats that could not be graded are an infrastructure problem: more of them decide nothing.
  if ((base.infraErrors ?? 0) > 0 || (head.infraErrors ?? 0) > 0) {
    return { more: false, expectations: {}, reason: `Stopped: some repeats could not be graded (${n}).` };
  }
  const expectations: Record<string, ExpectationDecision> = {};
  for (const [id, h] of Object.entries(head.expectations)) {
    if (h.fail === 0) continue;
    const b = base.expectations[id] ?? { pass: 0, fail: 0 };
    expectations[id] = decideExpectation(
      { fails: b.fail, runs: b.pass + b.fail },
      { fails: h.fail, runs: h.pass + h.fail },
      policy,
    );
  }
  const entries = Object.entries(expectations);
  const pending = entries.filter(([, d]) => d.decision === 'continue').map(([id]) => id);
  if (pending.length > 0) {
    return { more: true, expectations, reason: `The test has not decided ${pending.join(', ')} yet (${n}).` };
  }
  if (entries.length === 0) {
    const agree = graded(base) === base.passes || base.passes === 0;
    const what = agree
      ? 'the head never failed an expectation'
      : 'the head never failed an expectation the base did';
    return {
      more: false,
      expectations,
      reason: `Stopped at ${policy.min === head.runs ? 'min' : 'a look'}: ${what} (${n}).`,
    };
  }
  const said = entries.map(([id, d]) => {
    const p = d.p === null ? '' : `, p=${percent(d.p)}`;
    const words = {
      worse: 'head worse',
      'not-worse': 'base fails it as often',
      undecided: `no decision at max ${policy.max}`,
      continue: 'undecided',
    }[d.decision];
    return `${id}: ${words}${p}`;
  });
  return { more: false, expectations, reason: `Stopped by the sequential test (${said.join('; ')}; ${n}).` };
}
