// The verdict policy (docs/statistics.md): BLOCK when any case's class (or `flaky`) is in
// gate.block, else WARN when any is in gate.warn, else PASS. Two runs are never PASS whatever the
// gate says, because they prove nothing about the cases they did not grade: an interrupted run (or
// a merge missing shards), a run that is not the whole suite (filtered by --scenario / --tag), and a
// run with zero graded cases (no case, or every case incomplete).
// A suite weakened against the base's is at least WARN, and BLOCK when gate.block lists
// `suite-weakened`, whatever gate.warn says.
import type { FailOn } from '../config/options.js';
import { GateClass } from '../config/schema.js';
import { type CaseClass, DEFAULT_GATE, type GatePolicy } from '../model/classes.js';
import type { CaseReport, GateReason, GateVerdict } from '../model/report.js';

export { DEFAULT_GATE, type GatePolicy, type GateReason };

/** What the run itself says beside its cases. */
export interface RunFacts {
  interrupted?: boolean;
  /** Shards of a merged report that no report covered. */
  missingShards?: readonly number[];
  /** How the suite that ran is weaker than the base's, one sentence each. */
  suiteWeakened?: readonly string[];
  /** Why the policy is not the one asked for (the base's stategate.yml could not be loaded). */
  policyProblem?: string;
  /** Why the cases are not the whole pinned suite (a --scenario / --tag filter, or cases missing). */
  notWholeSuite?: string;
}

export interface GateDecision {
  verdict: GateVerdict;
  reasons: GateReason[];
}

export type GatedCase = Pick<CaseReport, 'id' | 'class' | 'flaky'>;

function checkPolicy(gate: GatePolicy): void {
  for (const level of ['block', 'warn'] as const) {
    const list = gate[level];
    if (!Array.isArray(list))
      throw new Error(`gate.${level}: expected a list of classes, got ${JSON.stringify(list)}`);
    for (const name of list) {
      if (!GateClass.options.includes(name as never)) {
        throw new Error(
          `gate.${level}: unknown class '${name}' (expected one of ${GateClass.options.join(', ')})`,
        );
      }
    }
  }
}

/** The gate classes a case matches: its class, and `flaky` when either side is flaky. */
export function gateClassesOf(c: GatedCase): string[] {
  return c.flaky.base || c.flaky.head ? [c.class, 'flaky'] : [c.class];
}

function listCases(ids: string[]): string {
  const shown = ids.slice(0, 3).join(', ');
  return ids.length > 3 ? `${shown} and ${ids.length - 3} more` : shown;
}

function listWeakenings(texts: readonly string[]): string {
  const shown = texts
    .slice(0, 5)
    .map((t) => (t.length > 200 ? `${t.slice(0, 199)}…` : t))
    .join('; ');
  return texts.length > 5 ? `${shown}; and ${texts.length - 5} more` : shown;
}

function matching(
  cases: readonly GatedCase[],
  classes: readonly string[],
  verdict: GateReason['verdict'],
): GateReason[] {
  const out: GateReason[] = [];
  for (const cls of classes) {
    const ids = cases.filter((c) => gateClassesOf(c).includes(cls)).map((c) => c.id);
    if (ids.length > 0)
      out.push({ verdict, class: cls, cases: ids, text: `${ids.length} ${cls} (${listCases(ids)})` });
  }
  return out;
}

/** Decides the verdict of a run and says why. */
export function gateDecision(
  cases: readonly GatedCase[],
  gate: GatePolicy,
  run: RunFacts = {},
): GateDecision {
  checkPolicy(gate);
  const block = matching(cases, gate.block, 'BLOCK');
  const warn = matching(cases, gate.warn, 'WARN');
  const weakened = run.suiteWeakened ?? [];
  if (weakened.length > 0) {
    const level = gate.block.includes('suite-weakened') ? block : warn;
    level.unshift({
      verdict: level === block ? 'BLOCK' : 'WARN',
      class: 'suite-weakened',
      cases: [],
      text: `suite weakened: ${listWeakenings(weakened)}`,
    });
  }
  const facts: GateReason[] = [];
  const fact = (text: string) => facts.push({ verdict: 'WARN', class: null, cases: [], text });
  if (run.policyProblem) fact(run.policyProblem);
  if (run.interrupted) fact('the run was interrupted before every episode finished');
  if (run.notWholeSuite) fact(run.notWholeSuite);
  if (run.missingShards && run.missingShards.length > 0) {
    fact(`shard${run.missingShards.length === 1 ? '' : 's'} ${run.missingShards.join(', ')} did not report`);
  }
  const graded = cases.filter((c) => (c.class as CaseClass) !== 'incomplete').length;
  if (cases.length === 0) fact('no case was graded: the run has no cases');
  else if (graded === 0) fact('no case was graded: every case is incomplete');
  if (block.length > 0) return { verdict: 'BLOCK', reasons: [...block, ...warn, ...facts] };
  if (warn.length > 0 || facts.length > 0) return { verdict: 'WARN', reasons: [...warn, ...facts] };
  return { verdict: 'PASS', reasons: [] };
}

/** The check-run conclusion of a verdict. */
export function checkConclusion(verdict: GateVerdict): 'success' | 'neutral' | 'failure' {
  return verdict === 'PASS' ? 'success' : verdict === 'WARN' ? 'neutral' : 'failure';
}

export type { FailOn };

/** Whether the gate fails at this level: BLOCK fails at block and warn, WARN only at warn. */
export function gateFails(verdict: GateVerdict, failOn: FailOn): boolean {
  if (failOn === 'never') return false;
  return verdict === 'BLOCK' || (verdict === 'WARN' && failOn === 'warn');
}

/** The CLI exit code of a verdict: 0 the gate passed, 2 it failed. */
export function exitCodeFor(verdict: GateVerdict, failOn: FailOn): 0 | 2 {
  return gateFails(verdict, failOn) ? 2 : 0;
}
